/// A classifier of calendar items: flights, meetings, and later trains, hotels or user rules.
public protocol ItemClassifier: Sendable {
    /// Adds what it finds to `classification`, which earlier classifiers filled in.
    func classify(_ input: ClassifierInput, into classification: inout Classification)
}
