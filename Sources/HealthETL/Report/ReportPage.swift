import Foundation

/// Why a report page cannot be made; each names the file and what to do.
public enum ReportPageError: Error, Sendable, Equatable, CustomStringConvertible {
  /// `code`: the system's error number when a file that is there could not be read (a
  /// descriptor limit reached is the machine's fault, not the template's).
  case unreadable(path: String, reason: String, hint: String, code: Int32? = nil)
  case placeholder(path: String, placeholder: String, found: Int)
  case placeholdersOutOfOrder(path: String)
  case unsafeLibrary(path: String, sequence: String)

  /// The system's error number behind the failure, when a file could not be read.
  public var systemCode: Int32? {
    guard case .unreadable(_, _, _, let code) = self else { return nil }
    return code
  }

  public var description: String {
    switch self {
    case .unreadable(let path, let reason, let hint, _):
      return "cannot read \(path): \(reason)\(hint.isEmpty ? "" : "; " + hint)"
    case .placeholder(let path, let placeholder, let found):
      return "report template \(path) must hold \(placeholder) exactly once (found \(found) times)"
    case .placeholdersOutOfOrder(let path):
      return "report template \(path) must hold the chart library's placeholder before the data's"
    case .unsafeLibrary(let path, let sequence):
      return "chart library \(path) contains \(sequence), which would end or disturb its <script> element; "
        + "use the file of Debian's libjs-chart.js"
    }
  }
}

/// Fills the report template (Pipelines/report/DATA.md, "Filling the template"): the template is
/// split at its two placeholders once, when the job's stage is built, and `render` joins the five
/// parts in one pass, so inserted text is never searched for a placeholder.
public struct ReportPage: Sendable {
  public static let libraryPlaceholder = "<!--HEALTHETL:CHART_JS-->"
  public static let dataPlaceholder = "<!--HEALTHETL:REPORT_DATA-->"

  /// Template before the library, between library and data, after the data.
  let head: [UInt8]
  let middle: [UInt8]
  let tail: [UInt8]
  let library: [UInt8]

  /// Reads and checks both files.
  ///
  /// - Throws: `ReportPageError` naming the file: unreadable, a placeholder missing, repeated or
  ///   out of order, or a library containing `</script` (any case) or `<!--`.
  public init(templatePath: String, libraryPath: String) throws(ReportPageError) {
    let template = try Self.read(templatePath, hint: "")
    let library = try Self.read(
      libraryPath,
      hint: libraryPath == "/usr/share/javascript/chart.js/chart.min.js"
        ? "install Debian's libjs-chart.js (apt-get install libjs-chart.js)" : "")
    try self.init(template: template, templatePath: templatePath, library: library, libraryPath: libraryPath)
  }

  public init(template: [UInt8], templatePath: String, library: [UInt8], libraryPath: String)
    throws(ReportPageError)
  {
    let libraryMarks = Self.ranges(of: Array(Self.libraryPlaceholder.utf8), in: template)
    let dataMarks = Self.ranges(of: Array(Self.dataPlaceholder.utf8), in: template)
    guard libraryMarks.count == 1 else {
      throw .placeholder(path: templatePath, placeholder: Self.libraryPlaceholder, found: libraryMarks.count)
    }
    guard dataMarks.count == 1 else {
      throw .placeholder(path: templatePath, placeholder: Self.dataPlaceholder, found: dataMarks.count)
    }
    guard libraryMarks[0].upperBound <= dataMarks[0].lowerBound else {
      throw .placeholdersOutOfOrder(path: templatePath)
    }
    let lowered = library.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    for sequence in ["</script", "<!--"] where !Self.ranges(of: Array(sequence.utf8), in: lowered).isEmpty {
      throw .unsafeLibrary(path: libraryPath, sequence: sequence)
    }
    head = Array(template[..<libraryMarks[0].lowerBound])
    middle = Array(template[libraryMarks[0].upperBound..<dataMarks[0].lowerBound])
    tail = Array(template[dataMarks[0].upperBound...])
    self.library = library
  }

  /// Writes the page with `json` (compact UTF-8 JSON) inside into `file`, a piece at a time, so
  /// that the data is never all in memory. Every `<` of it becomes `\u003c`, which JSON reads back
  /// as `<` (it can only occur inside strings) and which cannot end the script.
  public func write(json: ReportJSON, to file: OutputFile) throws(OutputError) {
    try file.write(head + library + middle)
    var piece: [UInt8] = []
    var writer = ReportJSON.Writer { (bytes) throws(OutputError) in
      piece.removeAll(keepingCapacity: true)
      Self.appendEscaped(bytes, to: &piece)
      try file.write(piece)
    }
    try json.write(to: &writer)
    try writer.flushAll()
    try file.write(tail)
  }

  /// `json` with every `<` as `\u003c`, so that no text of the data can end the script.
  private static func appendEscaped(_ json: [UInt8], to page: inout [UInt8]) {
    for byte in json {
      if byte == UInt8(ascii: "<") { page += Array("\\u003c".utf8) } else { page.append(byte) }
    }
  }

  static func read(_ path: String, hint: String) throws(ReportPageError) -> [UInt8] {
    guard FileManager.default.fileExists(atPath: path) else {
      throw .unreadable(path: path, reason: "no such file", hint: hint)
    }
    do throws(ConfigFileError) {
      return try ConfigFile.read(path, limit: Int.max)
    } catch {
      var reason = Substring(error.message)
      if reason.hasPrefix("cannot be read: ") { reason = reason.dropFirst("cannot be read: ".count) }
      // Out of descriptors: what to do is to raise the limit, not what the hint says.
      throw .unreadable(
        path: path, reason: String(reason), hint: error.isOutOfDescriptors ? "" : hint, code: error.systemCode)
    }
  }

  /// Non-overlapping occurrences of `needle` in `haystack`.
  static func ranges(of needle: [UInt8], in haystack: [UInt8]) -> [Range<Int>] {
    guard !needle.isEmpty, haystack.count >= needle.count else { return [] }
    var found: [Range<Int>] = []
    var index = 0
    let last = haystack.count - needle.count
    while index <= last {
      if haystack[index] == needle[0] && haystack[index..<index + needle.count].elementsEqual(needle) {
        found.append(index..<index + needle.count)
        index += needle.count
      } else {
        index += 1
      }
    }
    return found
  }
}
