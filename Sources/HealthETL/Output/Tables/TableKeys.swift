/// What identifies a row of an output table and what a query looks it up by: the keys and
/// indexes of its table in `health.sqlite` (Pipelines/docs/outputs.md, "health.sqlite").
public struct TableKeys: Sendable, Equatable {
  /// A column holding the primary key of a row of another table of the same job.
  public struct Reference: Sendable, Equatable {
    public var column: String
    /// The other table's name in pipeline files (`workouts`).
    public var table: String

    public init(_ column: String, to table: String) {
      self.column = column
      self.table = table
    }
  }

  /// The columns whose values no two rows share; empty for a table without one.
  public var primary: [String]
  /// Each an index, its columns in order.
  public var indexes: [[String]]
  public var references: [Reference]

  public init(primary: [String] = [], indexes: [[String]] = [], references: [Reference] = []) {
    self.primary = primary
    self.indexes = indexes
    self.references = references
  }

  public static let none = TableKeys()
}
