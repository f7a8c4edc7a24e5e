import HealthModel

/// The server code of every workout activity type (`Pipelines/workout-codes.json`),
/// read strictly: the user edits this file, and a misspelt name must fail the run loudly
/// rather than silently send `SERVER999`.
///
/// File format (every key documented in `Pipelines/docs/workouts.md`, "`workout-codes.json`"):
/// ```json
/// {
///   "version": 1,
///   "description": "optional free text",
///   "default": "SERVER999",
///   "codes": { "Walking": "SERVER01", "Running": "SERVER02" }
/// }
/// ```
/// `codes` keys are `HKWorkoutActivityType` case names without the prefix (`Running`, not
/// `HKWorkoutActivityTypeRunning`), deprecated cases included; a type not listed gets `default`
/// (itself `SERVER999` when absent).
public struct WorkoutCodeTable: Sendable, Equatable {
  /// Where the shipped table lives, relative to the package (and to the working directory of
  /// `make` targets).
  public static let defaultPath = "Pipelines/workout-codes.json"
  /// The only format version so far.
  public static let formatVersion = 1

  /// Code of an activity type name not in `codes`.
  public let defaultCode: String
  /// Activity type name (`Running`) → server code.
  public let codes: [String: String]

  /// A table from its parts (the shipped file's defaults: `shipped`).
  public init(defaultCode: String = "SERVER999", codes: [String: String]) {
    self.defaultCode = defaultCode
    self.codes = codes
  }

  /// The mapping HealthETL ships: Walking `SERVER01`, Running `SERVER02`, Cycling `SERVER03`,
  /// Hiking `SERVER04`, Swimming `SERVER05`, Gymnastics `SERVER06`, Volleyball `SERVER30`,
  /// everything else `SERVER999`.
  public static let shipped: WorkoutCodeTable = {
    let special = [
      "Walking": "SERVER01", "Running": "SERVER02", "Cycling": "SERVER03", "Hiking": "SERVER04",
      "Swimming": "SERVER05", "Gymnastics": "SERVER06", "Volleyball": "SERVER30",
    ]
    var codes: [String: String] = [:]
    for name in WorkoutActivityTypeTable.names { codes[name] = special[name] ?? "SERVER999" }
    return WorkoutCodeTable(defaultCode: "SERVER999", codes: codes)
  }()

  /// The server code of an activity type name (`Running`), or of an export string
  /// (`HKWorkoutActivityTypeRunning`).
  public func code(forActivity name: String) -> String {
    codes[WorkoutActivityTypeTable.name(fromExportString: name)] ?? defaultCode
  }

  /// Reads and validates a code table file.
  public static func load(path: String) throws(ConfigFileError) -> WorkoutCodeTable {
    try parse(ConfigFile.read(path), file: path)
  }

  /// Validates the text of a code table; `file` names it in errors.
  public static func parse(_ bytes: [UInt8], file: String) throws(ConfigFileError) -> WorkoutCodeTable {
    let root = try ConfigFile.parse(bytes, file: file)
    let object = try root.object(
      allowed: ["version", "description", "default", "codes"], required: ["version", "codes"])
    let versionNode = try object.required("version")
    let version = try versionNode.integer(in: Int.min...Int.max)
    guard version == formatVersion else {
      throw versionNode.error("version \(version) is not supported; this HealthETL reads version \(formatVersion)")
    }
    _ = try object["description"]?.string()
    let defaultCode = try object["default"].map(serverCode) ?? "SERVER999"
    var codes: [String: String] = [:]
    for (name, value) in try object.required("codes").entries() {
      guard WorkoutActivityTypeTable.rawValue(for: name) != nil else {
        let hint =
          name.hasPrefix(WorkoutActivityTypeTable.prefix)
          ? "write it without the \(WorkoutActivityTypeTable.prefix) prefix"
          : "names are HKWorkoutActivityType cases such as Running or TraditionalStrengthTraining"
        throw value.error("unknown activity type '\(ConfigNode.excerpt(name))': \(hint)")
      }
      codes[name] = try serverCode(value)
    }
    return WorkoutCodeTable(defaultCode: defaultCode, codes: codes)
  }

  /// A non-empty code of printable characters without spaces.
  private static func serverCode(_ node: ConfigNode) throws(ConfigFileError) -> String {
    guard case .string(let code) = node.value.kind, !code.isEmpty,
      code.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
    else {
      throw node.error("must be a non-empty server code string without spaces, not \(node.value.typeDescription)")
    }
    return code
  }
}
