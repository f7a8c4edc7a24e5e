public import HealthModel

/// Per-day figures a subject adds to the table of days (`daily.csv`, its sheet of `health.xlsx`,
/// its table of `health.sqlite`, the report's days): a product the subject's mart publishes, which
/// the daily mart reads by this protocol, never by name. A kind lists its day-column products
/// (`JobKind.dayColumns`); the registry hands them to the daily kind, which appends their columns
/// after its own, in registry order, and reads each product of the run whether or not the run has
/// a job of its kind (the kind then makes a mart that writes no file, `JobKind.makeProvider`).
public protocol DayColumnsProduct: MartProduct, Sendable where Request == NoRequest {
  /// The columns, declared once: number columns with their unit, precision and meaning.
  static var columns: [Column] { get }
  /// Column `index`'s value on `date`, in the column's unit, as the column shows it; nil where
  /// nothing was measured (never 0 for nothing).
  func value(_ index: Int, on date: CivilDate) -> Double?
  /// Every date with a value in some column.
  var dates: [CivilDate] { get }
  /// The sample types (short names) whose every sample the columns show: a run whose pipeline has
  /// the table of days shows them (Pipelines/docs/nightly.md, "Every record accounted for").
  static var sampleTypes: [String] { get }
}

extension DayColumnsProduct {
  public static var sampleTypes: [String] { [] }
}

extension MartProducts {
  /// The run's product of `type`, as the protocol: for a reader that knows it only as that.
  public func dayColumns<Product: DayColumnsProduct>(_ type: Product.Type) -> (any DayColumnsProduct)? {
    read(type)
  }
}
