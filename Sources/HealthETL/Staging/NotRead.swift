import HealthExtract

/// What an export held that no reader of HealthETL takes in, counted by name
/// (Pipelines/docs/input.md, "What was not read"): the elements, the attributes and the files beside
/// the main XML that no job of any pipeline could write. A format HealthETL does not read yet
/// shows up here by name instead of passing in silence.
///
/// Bounded, whatever the export: the first `namesKept` distinct names are counted one by one,
/// later ones only in the total, and every name is cut to an excerpt.
public struct NotReadTally: Sendable {
  /// Distinct names counted one by one.
  public static let namesKept = 1000
  /// Names `run.json` and `inspect` list (the most frequent first).
  public static let namesListed = 50

  public private(set) var counts: [String: Int] = [:]
  /// Every occurrence, including those of names past `namesKept`.
  public private(set) var total = 0

  public init() {}

  mutating func add(_ name: String, count: Int = 1) {
    total += count
    let key = ElementAttributes.excerpt(name)
    if counts[key] != nil || counts.count < Self.namesKept { counts[key, default: 0] += count }
  }

  /// Adds every count of `other`, its occurrences past `namesKept` included.
  mutating func merge(_ other: NotReadTally) {
    var counted = 0
    for (name, count) in other.counts {
      add(name, count: count)
      counted += count
    }
    total += other.total - counted
  }

  /// The `namesListed` most frequent names (ties in name order) and how many distinct names, or
  /// occurrences past `namesKept`, are left out of that list.
  public var listed: (names: [(name: String, count: Int)], omitted: Int) {
    let sorted = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
    let shown = sorted.prefix(Self.namesListed).map { (name: $0.key, count: $0.value) }
    return (shown, total - shown.reduce(0) { $0 + $1.count })
  }
}

/// The three tallies.
public struct NotRead: Sendable {
  public var elements = NotReadTally()
  public var attributes = NotReadTally()
  /// Nil when the export's files could not be listed (standard input, a bare XML file).
  public var files: NotReadTally?
  /// False when the export held more files than are listed (`ExportInput.filesListed`) or its
  /// zip's list of members broke off: `files` then counts only those listed.
  public var filesListedWhole = true

  public init() {}

  /// How an attribute is named: `Record/@Health_Mate_App_Version`.
  static func attributeName(element: String, attribute: String) -> String { element + "/@" + attribute }

  /// How a file is named: its folder and extension for a file in a folder
  /// (`electrocardiograms/*.csv`), its own name beside the main XML (`export_cda.xml`).
  public static func fileName(_ relativePath: String) -> String {
    guard let slash = relativePath.lastIndex(of: "/") else { return relativePath }
    let base = relativePath[relativePath.index(after: slash)...]
    let folder = relativePath[..<slash]
    guard let dot = base.lastIndex(of: "."), dot != base.startIndex else { return folder + "/*" }
    return folder + "/*" + base[dot...]
  }
}

/// Files beside the main XML that a reader takes in, as that reader declares them (each kind of
/// job lists its marts' claims, `JobKind.filesRead`); every other file of the export is counted
/// as not read.
public struct ExportFileClaim: Sendable {
  /// How `run.json` names what is claimed (`workout-routes/*.gpx`).
  public let name: String
  let matches: @Sendable (_ relativePath: String) -> Bool

  /// - Parameter matches: whether the reader takes in the file at this path, relative to the
  ///   main XML's folder.
  public init(_ name: String, matches: @escaping @Sendable (_ relativePath: String) -> Bool) {
    self.name = name
    self.matches = matches
  }

  /// Every file directly in `folder`.
  public static func folder(_ folder: String) -> ExportFileClaim {
    ExportFileClaim(folder + "/*") { path in
      path.hasPrefix(folder + "/") && !path.dropFirst(folder.count + 1).contains("/")
    }
  }
}

extension NotRead {
  /// Counts the files of the export that neither the main XML nor any claim covers. A bare XML
  /// file or standard input has no export folder around it: `files` stays nil. The run's own
  /// output folder (`outputFolder`) is not the export's, nor are hidden entries.
  mutating func countFiles(of input: InputInfo, claims: [ExportFileClaim], outputFolder: String?) {
    guard input.form == .zip || input.form == .directory else { return }
    let main = input.memberName.split(separator: "/").last.map(String.init) ?? input.memberName
    var tally = NotReadTally()
    do {
      // The main parse read this zip or folder a moment ago; one that cannot be listed now
      // leaves the count partial rather than failing a run that has read everything.
      filesListedWhole = try ExportInput.forEachFilePath(
        of: ExportInput.companions(of: input, outputFolder: outputFolder)
      ) { path in
        guard path != main, !claims.contains(where: { $0.matches(path) }) else { return }
        tally.add(Self.fileName(path))
      }
    } catch {
      filesListedWhole = false
    }
    files = tally
  }
}

extension NotRead {
  /// The most frequent names of all three tallies, for one line of `inspect` and of a run's
  /// summary: `Record/@Health_Mate_App_Version (2), export_cda.xml (1)`, or nil when everything
  /// was read.
  public func summary(names limit: Int = 5) -> String? {
    var all = elements.listed.names + attributes.listed.names
    if let files { all += files.listed.names }
    let total = elements.total + attributes.total + (files?.total ?? 0)
    guard total > 0 else { return nil }
    let shown = all.sorted { $0.count != $1.count ? $0.count > $1.count : $0.name < $1.name }.prefix(limit)
    let rest = total - shown.reduce(0) { $0 + $1.count }
    return shown.map { "\($0.name) (\($0.count))" }.joined(separator: ", ") + (rest > 0 ? " … and \(rest) more" : "")
  }
}
