import Glibc

/// What can go wrong while reading an export, each with the sentence a user sees.
public enum ExtractError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The path does not exist.
  case notFound(path: String)
  /// The file could not be opened or read (permissions, I/O error).
  case unreadable(path: String, reason: String)
  /// Reading failed part-way (the device or file system reported an error after the input was
  /// opened): an I/O error, not a bad export.
  case readFailed(path: String, reason: String)
  /// The input is not an Apple Health export at all.
  case notAnExport(path: String, reason: String)
  /// The XML is malformed at a place other than its end; `message` says how, in words.
  case malformed(path: String, line: Int, column: Int, message: String)
  /// The input ended before the document did (a download cut short).
  case truncated(path: String, line: Int, message: String)
  /// The zip member holding the export is password-protected.
  case encrypted(path: String, member: String)
  /// The zip archive's data fails its own check (CRC, sizes, deflate stream): it is damaged.
  case damaged(path: String, member: String, message: String)
  /// The document is not UTF-8 (a UTF-16, UTF-32 or EBCDIC byte pattern, or another declared encoding);
  /// `path` names the zip member or file too when they differ.
  case unsupportedEncoding(path: String, encoding: String)
  /// The zip or folder holds more than one export document.
  case severalExports(path: String, first: String, second: String)
  /// Opening `path` found no file descriptor left: this process's limit (`EMFILE`; `limit` is
  /// the limit) or the system's (`ENFILE`). The machine's fault, never the export's.
  case tooManyOpenFiles(path: String, limit: Int?)

  /// Whether the system's error number `code` says no descriptor was left to open a file with.
  public static func isOutOfDescriptors(_ code: Int32) -> Bool { code == EMFILE || code == ENFILE }

  /// This process's limit of open files (`ulimit -n`) when `code` is `EMFILE`, else nil.
  public static func descriptorLimit(for code: Int32) -> Int? {
    var limit = rlimit()
    guard code == EMFILE, getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
    return Int(limit.rlim_cur)
  }

  /// The error for an open of `path` that failed with `code`: running out of descriptors is said
  /// as such, never as a file that cannot be read.
  public static func openFailure(path: String, code: Int32) -> ExtractError {
    if isOutOfDescriptors(code) { return .tooManyOpenFiles(path: path, limit: descriptorLimit(for: code)) }
    return .unreadable(path: path, reason: String(cString: strerror(code)))
  }

  public var description: String {
    switch self {
    case .notFound(let path):
      return
        "\(path): no such file or folder; pass the export.zip, the unpacked apple_health_export folder, its export.xml, or - for standard input"
    case .unreadable(let path, let reason):
      return "\(path): cannot be read: \(reason)"
    case .readFailed(let path, let reason):
      return
        "\(path): reading failed part-way (\(reason)): the disk or file system reported an error, and nothing was written. Check the device (dmesg), or copy the export to another disk and run again."
    case .notAnExport(let path, let reason):
      return
        "\(path) is not an Apple Health export: \(reason). Export it from the Health app (profile picture → Export All Health Data) and pass export.zip or its export.xml."
    case .malformed(let path, let line, let column, let message):
      return
        "\(path):\(line):\(column): the export is not well-formed XML: \(message). `healthetl run --recover` (or inspect, validate --recover) reads past the damage and keeps everything else, listing what it left out; or export again from the Health app."
    case .truncated(let path, let line, let message):
      return
        "\(path):\(line): the export ends too early (\(message)): the file looks cut short, e.g. an interrupted download or copy. Re-export or copy it again, or pass --allow-truncated to process everything before line \(line)."
    case .encrypted(let path, let member):
      return
        "\(path): \(member) is encrypted (password-protected) and HealthETL cannot decrypt it. Export again from the Health app and pass that export.zip without adding a password, or unzip it yourself and pass the apple_health_export folder."
    case .damaged(let path, let member, let message):
      return
        "\(path): the zip archive is damaged (\(member): \(message)): its data does not match its own checksum or sizes, so nothing read from it can be trusted. Copy or download it again, or export again from the Health app."
    case .unsupportedEncoding(let path, let encoding):
      // Told by the bytes themselves (not declared): another program converted the file.
      if encoding.hasPrefix("UTF-16") || encoding.hasPrefix("UTF-32") || encoding == "EBCDIC" {
        // EBCDIC has many code pages; IBM037 is the US one, iconv's name for it.
        let from = encoding == "EBCDIC" ? "IBM037" : encoding
        return
          "\(path) is \(encoding) text, but the Health app writes exports in UTF-8 and HealthETL reads only UTF-8: another program converted this file. Convert it back (iconv -f \(from) -t UTF-8 converted.xml > export.xml) or export again from the Health app."
      }
      return
        "\(path) declares encoding=\"\(encoding)\", but the Health app writes exports in UTF-8 and HealthETL reads only UTF-8. Export again from the Health app, or convert the file to UTF-8 and fix its <?xml …?> line."
    case .severalExports(let path, let first, let second):
      return
        "\(path) holds more than one export (\(first) and \(second)); HealthETL will not guess which one you mean. Pass the one you mean as EXPORT itself (unzip a zip first), or export again from the Health app."
    case .tooManyOpenFiles(let path, let limit):
      return
        "too many open files (opening \(path))\(limit.map { ": this process may open \($0)" } ?? ": the system's table of open files is full"); the export was not at fault. Raise the limit (ulimit -n) and run again."
    }
  }
}
