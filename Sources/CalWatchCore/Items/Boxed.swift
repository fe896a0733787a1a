/// A value kept behind a reference: a word where the value would otherwise sit inline. For what is large and
/// mostly absent (a flight's facts, a to-do's due date), and for the values of a table that grows (a spare slot
/// then costs a word, not a whole value). Immutable, so it is shared freely; compared and hashed as the value.
package final class Boxed<Value: Sendable>: Sendable {
    package let value: Value

    package init(_ value: Value) { self.value = value }
}

extension Boxed: Equatable where Value: Equatable {
    package static func == (left: Boxed, right: Boxed) -> Bool { left === right || left.value == right.value }
}

extension Boxed: Hashable where Value: Hashable {
    package func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
