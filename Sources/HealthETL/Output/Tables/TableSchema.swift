public import HealthModel

/// How many digits of a number column are written. Every value is written in the shortest text
/// that reads back to the rounded value (`60`, not `60.0`; `0.69`, not `0.6900000000000001`).
public enum NumberPrecision: Sendable, Equatable {
  /// As recorded: the shortest text of the value itself (an integer count, a value no arithmetic
  /// touched).
  case asRecorded
  /// Rounded to this many significant digits: a converted sample value keeps every digit a
  /// Double can carry and loses the binary noise of its conversion (`84.53979999999999` → 84.5398).
  case significantDigits(Int)
  /// Rounded to this many decimal places, halves away from zero.
  case decimals(Int)
  /// Decided by the quantity's canonical unit (`UnitPrecision`): the declaration of a table
  /// whose value columns take the unit of the job's type. Resolved before any value is written.
  case byUnit

  /// `as recorded`, `15 significant digits`, `0.01`, `by unit`: the form the column tables print.
  public var description: String {
    switch self {
    case .asRecorded: return "as recorded"
    case .significantDigits(let digits): return "\(digits) significant digits"
    case .decimals(let places): return places == 0 ? "1" : "0." + String(repeating: "0", count: places - 1) + "1"
    case .byUnit: return "by unit"
    }
  }

  /// `value` as a column of this precision writes it.
  public func rounded(_ value: Double) -> Double {
    switch self {
    case .asRecorded, .byUnit: return value
    case .significantDigits(let digits): return NumberText.rounded(value, significantDigits: digits)
    case .decimals(let places): return NumberText.rounded(value, decimals: places)
    }
  }
}

/// How `health.xlsx` shows a number column. The cell holds the value as the CSV writes it; the
/// format only decides what the sheet shows (`0` shows 15706.6359 steps as 15707).
public enum SheetDisplay: Sendable, Equatable {
  /// By the column's kind and unit: seconds as `[h]:mm:ss` durations, fractions (`%`) as
  /// percentages, other numbers in Excel's General format.
  case automatic
  /// A fixed number of decimals (`0`, `0.0`, `0.00`).
  case decimals(Int)
  /// A duration of seconds shown `[h]:mm` (hours keep counting past a day).
  case hoursMinutes
  /// A duration of seconds shown `[h]:mm:ss`.
  case hoursMinutesSeconds
  /// Excel's General format.
  case general
  /// A fraction 0–1 shown as a percentage to 0.1 (`0.0%`: 0.68 shows 68.0%).
  case percent

  /// `0.0`, `[h]:mm`, or empty for General: the form the column tables print.
  public var description: String {
    switch self {
    case .automatic, .general: return ""
    case .decimals(let places): return places == 0 ? "0" : "0." + String(repeating: "0", count: places)
    case .hoursMinutes: return "[h]:mm"
    case .hoursMinutesSeconds: return "[h]:mm:ss"
    case .percent: return "0.0%"
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
    /// `YYYY-MM-DD` in the run's zone (JSON string). An instant value gives its local date.
    case date
    /// `YYYY-MM-DD HH:MM:SS`, the wall clock of the run's zone without an offset: the form Excel,
    /// LibreOffice and Google Sheets read as a date-time (JSON string). From an instant.
    case localTime = "local time"
    /// `YYYY-MM-DD HH:MM`, the wall clock of the run's zone cut to the minute (JSON string). From
    /// an instant.
    case localMinute = "local minute"
  }

  public let name: String
  public let kind: Kind
  /// The unit of the values (`s`, `m`, `kcal`, `count/min`), nil when it has none.
  public let unit: String?
  /// For `number` columns.
  public let precision: NumberPrecision
  /// How `health.xlsx` shows the column (numbers and durations).
  public let display: SheetDisplay
  /// One line for the column tables of `Pipelines/README.md`.
  public let meaning: String

  public init(
    _ name: String, _ kind: Kind, unit: String? = nil, precision: NumberPrecision = .asRecorded,
    display: SheetDisplay = .automatic, _ meaning: String
  ) {
    self.name = name
    self.kind = kind
    self.unit = unit
    self.precision = precision
    self.display = display
    self.meaning = meaning
  }

  /// The display `health.xlsx` uses: `.automatic` resolved by kind and unit.
  public var resolvedDisplay: SheetDisplay {
    guard display == .automatic else { return display }
    switch kind {
    case .integer, .number:
      switch unit {
      case "s": return .hoursMinutesSeconds
      case "%": return .percent
      default: return .general
      }
    default: return .general
    }
  }

  public static func text(_ name: String, _ meaning: String) -> Column { Column(name, .text, meaning) }
  public static func integer(
    _ name: String, unit: String? = nil, display: SheetDisplay = .automatic, _ meaning: String
  ) -> Column {
    Column(name, .integer, unit: unit, display: display, meaning)
  }
  public static func number(
    _ name: String, unit: String? = nil, precision: NumberPrecision, display: SheetDisplay = .automatic,
    _ meaning: String
  ) -> Column {
    Column(name, .number, unit: unit, precision: precision, display: display, meaning)
  }
  /// A number column whose precision and display come from `UnitPrecision` by its unit (`sum`:
  /// a pro-rata sum, which keeps at least four decimals).
  public static func measure(_ name: String, unit: String?, sum: Bool = false, _ meaning: String) -> Column {
    Column(
      name, .number, unit: unit, precision: UnitPrecision.precision(unit: unit, sum: sum),
      display: UnitPrecision.display(unit: unit, sum: sum), meaning)
  }
  public static func boolean(_ name: String, _ meaning: String) -> Column { Column(name, .boolean, meaning) }
  public static func instant(_ name: String, _ meaning: String) -> Column { Column(name, .instant, meaning) }
  public static func date(_ name: String, _ meaning: String) -> Column { Column(name, .date, meaning) }
  /// The `local_time` column of a table whose rows are parts of a day.
  public static func localTime(_ meaning: String) -> Column { Column("local_time", .localTime, meaning) }
  public static func localMinute(_ name: String, _ meaning: String) -> Column { Column(name, .localMinute, meaning) }
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
  /// Whether the table can be a sheet of `health.xlsx` (its column table then says how each
  /// column is shown there).
  public let inWorkbook: Bool
  /// Its keys and indexes in `health.sqlite`.
  public let keys: TableKeys

  public init(
    _ name: String, rows: String, defaultFile: String, columns: [Column], variableColumns: String? = nil,
    inWorkbook: Bool = false, keys: TableKeys = .none
  ) {
    self.name = name
    self.rows = rows
    self.defaultFile = defaultFile
    self.columns = columns
    self.variableColumns = variableColumns
    self.inWorkbook = inWorkbook
    self.keys = keys
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
