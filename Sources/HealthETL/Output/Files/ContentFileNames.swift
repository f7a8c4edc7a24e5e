import Foundation
import HealthModel

/// File names made from what an export says: the `{type}` of `samples/{type}.csv` and the `{name}`
/// of `elements/{name}.csv` (Pipelines/docs/outputs.md, "Where files go").
///
/// An export may name a type anything — `Foo.Bar` and `Foo_Bar`, `StepCount` and `stepcount`, 300
/// characters, `CON`, `run` — and every name must still get a file of its own, on any file system,
/// case-insensitive ones included:
///
/// - A *plain* name — ASCII letters, digits, `_` and `-`, at most `readableBytes` — is its own file
///   name (`StepCount`), unless it is a Windows device name (`CON`, `nul`, `COM1`), makes the path
///   of a file HealthETL keeps for itself (`{type}.json` and `run`), or another name of the run
///   differs from it only in case.
/// - Any other name becomes its readable part — each character other than those made `_`, cut to
///   `readableBytes`, a device name followed by `_` — then `.` and the first `hashDigits` hex digits
///   of the SHA-256 of the name's UTF-8 bytes: `Foo.Bar` is `Foo_Bar.845addd9`.
/// - Should two of those still meet, ignoring case (same readable part, same digits), all but the
///   first in byte order get `.2`, `.3`, … after the digits.
///
/// A plain name has no `.`, a hashed one one and a numbered one two, so the three kinds never
/// meet. A file name depends on the set of names of the run, never on the order they came in.
enum ContentFileNames {
  /// The longest plain name, and the longest readable part of any other.
  static let readableBytes = 64
  static let hashDigits = 8
  /// The longest file name made: the readable part, `_` after a device name, `.` and the digits,
  /// `.` and a number.
  static let longestName = readableBytes + 1 + 1 + hashDigits + 1 + String(Int.max).count

  /// Each of `names` → `pattern` with every `placeholder` replaced by the name's file name.
  static func paths(for names: some Sequence<String>, in pattern: String, placeholder: String) -> [String: String] {
    func path(_ file: String) -> String { pattern.replacingOccurrences(of: placeholder, with: file) }
    var plain: [String: [String]] = [:]
    var others: [String] = []
    for name in Set(names) {
      if isPlain(name), !isReserved(path(name)) {
        plain[lowercased(name), default: []].append(name)
      } else {
        others.append(name)
      }
    }
    var files: [String: String] = [:]
    for group in plain.values {
      if group.count == 1 { files[group[0]] = group[0] } else { others += group }
    }
    var hashed: [String: [(name: String, file: String)]] = [:]
    for name in others {
      let file = readablePart(name) + "." + digest(name)
      hashed[lowercased(file), default: []].append((name, file))
    }
    for group in hashed.values {
      let ordered = group.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
      for (index, entry) in ordered.enumerated() {
        files[entry.name] = index == 0 ? entry.file : entry.file + ".\(index + 1)"
      }
    }
    return files.mapValues(path)
  }

  /// Whether `name` can be a file name as it is, on its own.
  static func isPlain(_ name: String) -> Bool {
    !name.isEmpty && name.utf8.count <= readableBytes && name.utf8.allSatisfy(isKept) && !isDeviceName(name)
  }

  /// The name with every character but ASCII letters, digits, `_` and `-` made `_`, cut to
  /// `readableBytes` (all of it ASCII then, so any cut is between characters); never empty, never
  /// a device name.
  static func readablePart(_ name: String) -> String {
    var bytes: [UInt8] = []
    for scalar in name.unicodeScalars.prefix(readableBytes) {
      bytes.append(scalar.isASCII && isKept(UInt8(scalar.value)) ? UInt8(scalar.value) : UInt8(ascii: "_"))
    }
    if bytes.isEmpty { bytes = [UInt8(ascii: "_")] }
    let readable = String(decoding: bytes, as: UTF8.self)
    return isDeviceName(readable) ? readable + "_" : readable
  }

  /// The first `hashDigits` hex digits of the SHA-256 of `name`'s UTF-8 bytes.
  static func digest(_ name: String) -> String {
    let stream = Digest.SHA256Stream()
    Array(name.utf8).withUnsafeBytes { stream.update($0) }
    return String(stream.finalizeHex().prefix(hashDigits))
  }

  private static func isKept(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
      return true
    default: return false
    }
  }

  /// Names Windows gives to devices in every folder, whatever the case and the extension.
  static let deviceNames: Set<String> = Set(
    ["con", "prn", "aux", "nul"] + (1...9).flatMap { ["com\($0)", "lpt\($0)"] })

  private static func isDeviceName(_ name: String) -> Bool { deviceNames.contains(lowercased(name)) }

  /// Whether `path`'s first component is a file HealthETL keeps in the output folder, ignoring case.
  private static func isReserved(_ path: String) -> Bool {
    let first = lowercased(String(path.prefix { $0 != "/" }))
    return ToolFiles.reserved.contains { lowercased($0) == first }
  }

  /// ASCII letters in lower case, everything else as it is: how a case-insensitive file system
  /// compares the names made here.
  private static func lowercased(_ text: String) -> String {
    String(
      decoding: text.utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
  }
}
