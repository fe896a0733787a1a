/// What planning asked a cache for and found no answer to, in the order asked, each once until it is answered or
/// given up: the list a service (`RoutePoller`, `GeocodePoller`) takes its requests from.
struct WantedKeys<Key: Hashable & Sendable>: Sendable {
    private var list: [Key] = []
    /// Wanted, or taken and not answered yet: not wanted again meanwhile (planning asks for one key many times).
    private var pending: Set<Key> = []
    /// Rung when a key becomes wanted.
    var bell: (@Sendable () -> Void)?

    /// Notes `key` as wanted; the bell to ring (outside the lock) when it newly is.
    mutating func want(_ key: Key) -> (@Sendable () -> Void)? {
        guard pending.insert(key).inserted else { return nil }
        list.append(key)
        return bell ?? {}
    }

    /// Whether `key` is wanted or being asked.
    func isPending(_ key: Key) -> Bool { pending.contains(key) }

    /// Notes `key` as being asked, without listing it (asked again on the asker's own account).
    mutating func asking(_ key: Key) { pending.insert(key) }

    /// The keys wanted, oldest first; each stays pending until `done`.
    mutating func take() -> [Key] {
        defer { list = [] }
        return list
    }

    /// Keys taken but not asked yet, listed again without ringing.
    mutating func giveBack(_ keys: [Key]) { list += keys }

    /// `key` was answered, or found unanswerable: planning may want it again.
    mutating func done(_ key: Key) { pending.remove(key) }
}
