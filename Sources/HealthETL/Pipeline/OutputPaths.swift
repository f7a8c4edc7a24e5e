import Foundation

/// The rules for the files pipelines write (Pipelines/docs/outputs.md, "Output files"): every output
/// is a file inside the output folder, no two outputs share a file or use one as a folder, and
/// none takes a file HealthETL keeps for itself. Paths are compared after normalization, so
/// `x.csv`, `./x.csv` and `d//../x.csv` cannot sneak past each other.
enum OutputPaths {
  /// Placeholders that make one file per sample type or element name.
  static let placeholders = ["{type}", "{name}"]

  /// `file` without `.` components and repeated `/`; an error message when it is not a relative
  /// path of a file inside the output folder.
  static func normalize(_ file: String) -> Result<String, OutputPathProblem> {
    guard !file.isEmpty else { return .failure(.init("is empty; name a file such as data.csv")) }
    guard !file.hasPrefix("/") else {
      return .failure(.init("must be a relative path inside the output folder, not an absolute one"))
    }
    guard !file.hasSuffix("/") else { return .failure(.init("names a folder; name a file inside it")) }
    guard !file.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
      return .failure(.init("contains a control character"))
    }
    var parts: [Substring] = []
    for part in file.split(separator: "/", omittingEmptySubsequences: true) where part != "." {
      guard part != ".." else { return .failure(.init("must stay inside the output folder (no '..')")) }
      guard part.utf8.count <= 255 else { return .failure(.init("has a name longer than 255 bytes")) }
      // A `{type}` or `{name}` becomes a file name of up to `ContentFileNames.longestName` bytes.
      let replaced = placeholders.reduce(0) { $0 + part.components(separatedBy: $1).count - 1 }
      let longest = part.utf8.count + replaced * (ContentFileNames.longestName - "{type}".utf8.count)
      guard longest <= 255 else {
        return .failure(
          .init(
            "has a name that can grow to \(longest) bytes, over 255, once {type} or {name} is replaced by a file name of up to \(ContentFileNames.longestName) bytes; shorten it"
          ))
      }
      parts.append(part)
    }
    guard !parts.isEmpty else { return .failure(.init("names the output folder itself; name a file in it")) }
    let normalized = parts.joined(separator: "/")
    if let reserved = ToolFiles.reserved.first(where: { $0 == String(parts[0]) }) {
      // The message follows the quoted file name: the name is not repeated when it is the file.
      let what = normalized == reserved ? "is" : "is inside '\(reserved)', which is"
      return .failure(.init("\(what) a file HealthETL keeps in the output folder for itself; choose another name"))
    }
    return .success(normalized)
  }

  /// Why two normalized outputs cannot both be written, nil when they can.
  static func conflict(_ a: String, _ b: String) -> String? {
    if a == b { return "is also written by" }
    if b.hasPrefix(a + "/") || a.hasPrefix(b + "/") { return "is a folder or file of another output, written by" }
    if isPattern(a) || isPattern(b), patternsOverlap(a, b) { return "can name the same file as an output of" }
    return nil
  }

  static func isPattern(_ path: String) -> Bool { placeholders.contains { path.contains($0) } }

  /// Whether a per-type or per-name pattern can produce the other path (or a file of the other
  /// pattern): their fixed text before the first and after the last placeholder is compatible.
  /// A placeholder becomes a name made of letters, digits, `_`, `-` and `.`, never `/`
  /// (`ContentFileNames`).
  static func patternsOverlap(_ a: String, _ b: String) -> Bool {
    func ends(_ path: String) -> (prefix: String, suffix: String) {
      var first = path.endIndex
      var last = path.startIndex
      for placeholder in placeholders {
        if let range = path.range(of: placeholder) { first = min(first, range.lowerBound) }
        if let range = path.range(of: placeholder, options: .backwards) { last = max(last, range.upperBound) }
      }
      if first == path.endIndex { return (path, "") }
      return (String(path[..<first]), String(path[last...]))
    }
    let (prefixA, suffixA) = ends(a)
    let (prefixB, suffixB) = ends(b)
    let prefixesMatch = prefixA.hasPrefix(prefixB) || prefixB.hasPrefix(prefixA)
    let suffixesMatch = suffixA.hasSuffix(suffixB) || suffixB.hasSuffix(suffixA)
    guard prefixesMatch, suffixesMatch else { return false }
    // A concrete path matches a pattern only when what the placeholder stands for has no `/`.
    if !isPattern(b) {
      let middle = b.dropFirst(prefixA.count).dropLast(suffixA.count)
      return b.count >= prefixA.count + suffixA.count && !middle.contains("/")
    }
    if !isPattern(a) {
      let middle = a.dropFirst(prefixB.count).dropLast(suffixB.count)
      return a.count >= prefixB.count + suffixB.count && !middle.contains("/")
    }
    return true
  }
}

/// The files a plan's outputs claim so far, indexed so that checking one more output does not
/// compare it with every earlier one: a plan of thousands of statistics jobs is checked in
/// moments, not minutes. Gives the same answer as comparing with every earlier claim in order.
struct OutputClaims {
  private var claims: [(file: String, by: String)] = []
  /// Concrete file → its first claim.
  private var files: [String: Int] = [:]
  /// Every folder above a concrete file → the first claim below it.
  private var folders: [String: Int] = [:]
  /// The claims that are `{type}`/`{name}` patterns, which can meet anything.
  private var patterns: [Int] = []

  var count: Int { claims.count }

  /// The first earlier claim `file` cannot coexist with: how, and by whom.
  func conflict(_ file: String) -> (conflict: String, by: String)? {
    var candidates: [Int] = []
    if let index = files[file] { candidates.append(index) }
    if let index = folders[file] { candidates.append(index) }
    var folder = Substring(file)
    while let slash = folder.lastIndex(of: "/") {
      folder = folder[..<slash]
      if let index = files[String(folder)] { candidates.append(index) }
    }
    if OutputPaths.isPattern(file) { candidates = Array(claims.indices) } else { candidates += patterns }
    for index in candidates.sorted() {
      if let conflict = OutputPaths.conflict(file, claims[index].file) { return (conflict, claims[index].by) }
    }
    return nil
  }

  mutating func add(_ file: String, by: String) {
    let index = claims.count
    claims.append((file, by))
    if OutputPaths.isPattern(file) {
      patterns.append(index)
      return
    }
    if files[file] == nil { files[file] = index }
    var folder = Substring(file)
    while let slash = folder.lastIndex(of: "/") {
      folder = folder[..<slash]
      if folders[String(folder)] == nil { folders[String(folder)] = index }
    }
  }
}

/// What is wrong with an output's file name.
struct OutputPathProblem: Error {
  let message: String
  init(_ message: String) { self.message = message }
}
