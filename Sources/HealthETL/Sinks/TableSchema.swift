public import HealthModel

/// How many digits of a number column are written. Every value is written in the shortest text
/// that reads back to the rounded value (`60`, not `60.0`; `0.69`, not `0.6900000000000001`).
public enum NumberPrecision: Sendable, Equatable {
  /// As recorded: the shortest text of the value itself (a sample's own value, an exact sum).
  case asRecorded
  /// Rounded to this many significant digits: computed values (pro-rata shares, means) carry
  /// binary noise past the 15th digit that is not data (`59.99999999999999` for 60).
  case significantDigits(Int)
  /// Rounded to this many decimal places.
  case decimals(Int)

  /// `as recorded`, `12 significant digits`, `0.01`: the form the column tables print.
  public var description: String {
    switch self {
    case .asRecorded: return "as recorded"
    case .significantDigits(let digits): return "\(digits) significant digits"
    case .decimals(let places): return places == 0 ? "1" : "0." + String(repeating: "0", count: places - 1) + "1"
    }
  }
}

/// One column of an output table: its name, what its values are and how they are written.
public struct Column: Sendable, Equatable {
  /// What a column's values are. It decides the CSV text and the JSON type.
  public enum Kind: String, Sendable, Equatable {
    /// A string (JSON string).
    case text
    /// A whole number (JSON number).
    case integer
    /// A number written to the column's precision (JSON number).
    case number
    /// `true` / `false` (JSON boolean).
    case boolean
    /// ISO 8601 with the offset of the run's zone at that instant (JSON string).
    case instant
    /// `YYYY-MM-DD` in the run's zone (JSON string).
    case date
  }

  public let name: String
  public let kind: Kind
  /// The unit of the values (`s`, `m`, `kcal`, `count/min`), nil when it has none.
  public let unit: String?
  /// For `number` columns.
  public let precision: NumberPrecision
  /// One line for the column tables of `Pipelines/README.md`.
  public let meaning: String

  public init(
    _ name: String, _ kind: Kind, unit: String? = nil, precision: NumberPrecision = .asRecorded, _ meaning: String
  ) {
    self.name = name
    self.kind = kind
    self.unit = unit
    self.precision = precision
    self.meaning = meaning
  }

  public static func text(_ name: String, _ meaning: String) -> Column { Column(name, .text, meaning) }
  public static func integer(_ name: String, unit: String? = nil, _ meaning: String) -> Column {
    Column(name, .integer, unit: unit, meaning)
  }
  public static func number(
    _ name: String, unit: String? = nil, precision: NumberPrecision = .asRecorded, _ meaning: String
  ) -> Column {
    Column(name, .number, unit: unit, precision: precision, meaning)
  }
  public static func boolean(_ name: String, _ meaning: String) -> Column { Column(name, .boolean, meaning) }
  public static func instant(_ name: String, _ meaning: String) -> Column { Column(name, .instant, meaning) }
  public static func date(_ name: String, _ meaning: String) -> Column { Column(name, .date, meaning) }
}

/// An output table, declared once by the mart that writes it: its name in pipeline files, what
/// one row is, and its columns. The declaration drives the CSV and JSON writers, `pipelines
/// explain`, and the column tables of `Pipelines/README.md` (a test keeps those in step).
public struct TableSchema: Sendable, Equatable {
  /// The name a pipeline's `outputs[].table` uses (`daily`, `workouts`, `buckets`).
  public let name: String
  /// What one row is: `one row per date that has a sleep session, in date order`.
  public let rows: String
  public let columns: [Column]
  /// Where a job writes the table when its pipeline lists no outputs; `{job}` is the job's name,
  /// `{type}` and `{name}` make one file per sample type or element name.
  public let defaultFile: String
  /// For tables whose columns depend on the job or the data: what the variable part is.
  public let variableColumns: String?

  public init(
    _ name: String, rows: String, defaultFile: String, columns: [Column], variableColumns: String? = nil
  ) {
    self.name = name
    self.rows = rows
    self.defaultFile = defaultFile
    self.columns = columns
    self.variableColumns = variableColumns
  }

  /// The format a file name implies: `.json` an array, `.ndjson`/`.jsonl` one object per line,
  /// anything else CSV.
  public static func format(ofFile file: String) -> TableFormat {
    if file.hasSuffix(".ndjson") || file.hasSuffix(".jsonl") { return .ndjson }
    if file.hasSuffix(".json") { return .json }
    return .csv
  }

  public var columnNames: [String] { columns.map(\.name) }
}

/// One value of a row. Marts hand values to the writer; the writer turns them into text by the
/// column's declaration, so numbers go from Double to bytes once.
public enum Field: Sendable, Equatable {
  /// No value: an empty CSV field, JSON `null`.
  case missing
  case text(String)
  case integer(Int64)
  /// Non-finite numbers are written as missing.
  case number(Double)
  case boolean(Bool)
  case instant(Instant)
  case date(CivilDate)

  /// `.text` or missing.
  public static func text(_ value: String?) -> Field { value.map(Field.text) ?? .missing }
  /// `.integer` or missing.
  public static func integer(_ value: Int64?) -> Field { value.map(Field.integer) ?? .missing }
  /// `.integer` or missing.
  public static func integer(_ value: Int?) -> Field { value.map { .integer(Int64($0)) } ?? .missing }
  /// `.number` or missing.
  public static func number(_ value: Double?) -> Field { value.map(Field.number) ?? .missing }
  /// `.boolean` or missing.
  public static func boolean(_ value: Bool?) -> Field { value.map(Field.boolean) ?? .missing }
  /// `.instant` or missing.
  public static func instant(_ value: Instant?) -> Field { value.map(Field.instant) ?? .missing }
}
