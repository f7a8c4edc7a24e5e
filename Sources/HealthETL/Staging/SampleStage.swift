/// A consumer of the staging layer's output. Every method has a default that ignores its input,
/// so a stage implements only what it uses.
public protocol SampleStage: AnyObject {
  /// A distinct, valid record (duplicates and rejected records never arrive here).
  func consume(_ sample: borrowing Sample, catalog: SampleCatalog)
  /// A distinct, valid workout.
  func consume(_ workout: WorkoutElement)
  /// Any other top-level element.
  func consume(_ element: GenericElement)
}

extension SampleStage {
  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {}
  public func consume(_ workout: WorkoutElement) {}
  public func consume(_ element: GenericElement) {}
}
