import HealthExtract

/// A consumer of the staging layer's output. Every method has a default that ignores its input,
/// so a stage implements only what it uses.
public protocol SampleStage: AnyObject {
  /// A distinct, valid record (duplicates and rejected records never arrive here).
  func consume(_ sample: borrowing Sample, catalog: SampleCatalog)
  /// A distinct, valid workout.
  func consume(_ workout: WorkoutElement)
  /// Any other top-level element.
  func consume(_ element: GenericElement)
  /// An inline `Location` of a workout's route, as it streams (older exports write routes this
  /// way); `workout` is the `ordinal` of the `WorkoutElement` it belongs to, which arrives
  /// afterwards — or never, when that workout is a copy of an earlier one.
  func consume(routeLocation: RoutePoint, workout ordinal: Int)
}

extension SampleStage {
  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {}
  public func consume(_ workout: WorkoutElement) {}
  public func consume(_ element: GenericElement) {}
  public func consume(routeLocation: RoutePoint, workout ordinal: Int) {}
}
