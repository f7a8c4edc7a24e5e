/// The header block of an ECG file (`electrocardiograms/ecg_….csv`), each value as written
/// (CSV quoting undone, surrounding white space removed), nil when the file has no such line.
/// `Name` and `Date of Birth` are read past and never kept.
public struct ECGHeader: Sendable, Equatable {
  /// `Recorded Date`: `2024-03-20 08:15:32 +0100`.
  public var recordedDate: String?
  /// `Classification`: `Sinus Rhythm`, `Atrial Fibrillation`, `Inconclusive`, … (localised).
  public var classification: String?
  public var symptoms: String?
  public var softwareVersion: String?
  /// `Device`: `Watch6,2`.
  public var device: String?
  /// `Sample Rate`: `512 hertz`.
  public var sampleRate: String?
  /// A line whose key names the average heart rate, where the file has one.
  public var averageHeartRate: String?
  /// `Lead`: `Lead I`.
  public var lead: String?
  /// `Unit`: `µV`.
  public var unit: String?

  public init() {}
}

/// How reading one ECG file ended.
public struct ECGReadResult: Sendable, Equatable {
  /// The header block: whole when the samples started, as far as it was read when the file ended
  /// or broke before its first sample; nil for an empty file.
  public var header: ECGHeader?
  /// Samples handed to the handler.
  public var samples = 0
  /// Why the file could not be read to its end, with the line; nil when it was read whole.
  /// Samples before the problem were handed on.
  public var problem: String?
  /// Control characters (C0 but tab, and DEL) in header values, each made a space, as in export
  /// text: a NUL would cut the value short for a C client of health.sqlite.
  public var replacedControlCharacters = 0

  public init(header: ECGHeader? = nil, samples: Int = 0, problem: String? = nil, replacedControlCharacters: Int = 0) {
    self.header = header
    self.samples = samples
    self.problem = problem
    self.replacedControlCharacters = replacedControlCharacters
  }
}

/// Streams an ECG file of an export: a header block of `key,value` lines (`Name`, `Date of Birth`,
/// `Recorded Date`, `Classification`, `Symptoms`, `Software Version`, `Device`, `Sample Rate`,
/// `Lead`, `Unit`), then one sample in µV per line. Locales with a decimal comma write samples
/// such as `-265,868` (one number, not two fields) and quote header values that hold a comma.
///
/// Keys are matched by their English names; a key that is not one of them takes the meaning of
/// its position in Apple's fixed order, so a file whose keys are localised is still read (a value
/// ending in `BPM` is the average heart rate and takes no position; `µV` is the unit). The
/// samples start at the first line that is a number. Nothing but the current line is held: a
/// header line may be at most `longestHeaderLine` bytes and the header block at most
/// `headerLineLimit` lines, so a file that is no ECG is refused after a few kilobytes.
public enum ECGReader {
  public static let longestHeaderLine = 1024
  public static let headerLineLimit = 32
  /// A sample line is a number: anything longer is not one.
  static let longestSampleLine = 64

  /// Header keys in Apple's order; the position of a key that is not English.
  enum Key: Int, CaseIterable {
    case name, dateOfBirth, recordedDate, classification, symptoms, softwareVersion, device, sampleRate, lead, unit

    var english: String {
      switch self {
      case .name: return "name"
      case .dateOfBirth: return "date of birth"
      case .recordedDate: return "recorded date"
      case .classification: return "classification"
      case .symptoms: return "symptoms"
      case .softwareVersion: return "software version"
      case .device: return "device"
      case .sampleRate: return "sample rate"
      case .lead: return "lead"
      case .unit: return "unit"
      }
    }
  }

  /// Reads `stream` to its end. `header` gets the header block before the first sample and says
  /// whether to go on (false: the file is not wanted, nothing more is read); `sample` gets each
  /// sample in µV in file order.
  public static func read(
    _ stream: ExportFileStream, header: (ECGHeader) -> Bool, sample: (Double) -> Void
  ) -> ECGReadResult {
    parse(read: { buffer throws(ExtractError) in try stream.read(into: buffer) }, header: header, sample: sample)
  }

  /// Reads ECG bytes held in memory (tests, fuzzing).
  public static func read(bytes: [UInt8], header: (ECGHeader) -> Bool, sample: (Double) -> Void) -> ECGReadResult {
    var memory = BytesInMemory(bytes)
    return parse(read: { memory.read(into: $0) }, header: header, sample: sample)
  }

  private static func parse(
    read: (UnsafeMutableRawBufferPointer) throws(ExtractError) -> Int, header: (ECGHeader) -> Bool,
    sample: (Double) -> Void
  ) -> ECGReadResult {
    var result = ECGReadResult()
    var found = ECGHeader()
    var headerLines = 0
    var heartRateLines = 0
    var inSamples = false
    var line: [UInt8] = []
    var lineNumber = 1
    var lineTooLong = false
    /// Where the lines held back — a header line whose quoted value goes on past its line break,
    /// and those after it while it stays open — end in `line`; each break became the space there.
    var heldBreaks: [Int] = []
    var isFirstLine = true
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    defer { buffer.deallocate() }

    /// Handles one complete line; returns a problem that ends the read.
    func handle(_ bytes: ArraySlice<UInt8>) -> String? {
      var bytes = bytes
      if isFirstLine, bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
      isFirstLine = false
      if bytes.last == 0x0D { bytes = bytes.dropLast() }
      let trimmed = trim(bytes)
      if inSamples {
        if trimmed.isEmpty { return nil }
        guard let value = number(trimmed) else {
          return "line \(lineNumber): \(quoted(trimmed)) is not a number (one sample in µV per line)"
        }
        result.samples += 1
        sample(value)
        return nil
      }
      if trimmed.isEmpty { return nil }
      if let value = number(trimmed) {
        inSamples = true
        result.header = found
        guard header(found) else { return "" }
        result.samples += 1
        sample(value)
        return nil
      }
      headerLines += 1
      result.header = found
      guard headerLines <= headerLineLimit else {
        return "line \(lineNumber): no sample after \(headerLineLimit) header lines; not an ECG file"
      }
      var cleaned = Array(trimmed)
      for index in cleaned.indices where cleaned[index] != 0x09 && (cleaned[index] < 0x20 || cleaned[index] == 0x7F) {
        cleaned[index] = 0x20
        result.replacedControlCharacters += 1
      }
      let (key, value) = keyValue(cleaned[...])
      let lowered = key.lowercased()
      // The average heart rate is not always there, so it is known by its key or its `BPM`
      // value and takes no place in the order; the unit is known by its value.
      if lowered.contains("heart rate") || value?.lowercased().hasSuffix("bpm") == true {
        found.averageHeartRate = value
        heartRateLines += 1
        result.header = found
        return nil
      }
      let english = Key.allCases.first { $0.english == lowered }
      let isUnit = value.map { ["µv", "μv", "uv"].contains($0.lowercased()) } ?? false
      let position = english ?? (isUnit ? .unit : Key(rawValue: headerLines - 1 - heartRateLines))
      switch position {
      case .recordedDate: found.recordedDate = value
      case .classification: found.classification = value
      case .symptoms: found.symptoms = value
      case .softwareVersion: found.softwareVersion = value
      case .device: found.device = value
      case .sampleRate: found.sampleRate = value
      case .lead: found.lead = value
      case .unit: found.unit = value
      case .name, .dateOfBirth, nil: break
      }
      result.header = found
      return nil
    }

    /// Handles the line just ended, or holds it back while a quoted value goes on (a localised
    /// name on two lines, so that every key after it keeps its position): the next line joins it
    /// unless that one is empty or a sample.
    func complete(atEnd: Bool = false) -> String? {
      if let last = heldBreaks.last {
        var next = line[(last + 1)...]
        if next.last == 0x0D { next = next.dropLast() }
        next = trim(next)
        if atEnd || next.isEmpty || number(next) != nil {
          // No line closed the quote: each held line is read on its own, as written.
          let lines = heldBreaks.count
          lineNumber -= lines
          var from = 0
          for end in heldBreaks {
            if let problem = handle(line[from..<end]) { return problem }
            lineNumber += 1
            from = end + 1
          }
          line.removeSubrange(0...last)
          heldBreaks = []
        }
      }
      if !atEnd, !inSamples, Self.opensQuotedValue(line[...]), line.count < longestHeaderLine {
        if line.last == 0x0D { line.removeLast() }
        heldBreaks.append(line.count)
        line.append(0x20)
        lineNumber += 1
        return nil
      }
      heldBreaks = []
      if let problem = handle(line[...]) { return problem }
      line.removeAll(keepingCapacity: true)
      if !atEnd { lineNumber += 1 }
      return nil
    }

    while true {
      let got: Int
      do { got = try read(buffer) } catch {
        result.problem = error.description
        return result
      }
      if got == 0 { break }
      let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<got])
      var start = 0
      while start < got {
        // The line's bytes up to the next line feed go on at once, cut at the limit.
        let end = bytes[start...].firstIndex(of: 0x0A) ?? got
        let limit = inSamples ? longestSampleLine : longestHeaderLine
        let room = max(0, limit - line.count)
        if end - start > room { lineTooLong = true }
        line.append(contentsOf: bytes[start..<(start + min(room, end - start))])
        start = end + 1
        guard end < got else { break }
        if lineTooLong {
          result.problem = "line \(lineNumber): longer than \(inSamples ? longestSampleLine : longestHeaderLine) bytes"
          return result
        }
        if let problem = complete() {
          result.problem = problem.isEmpty ? nil : problem
          return result
        }
      }
    }
    if lineTooLong {
      result.problem = "line \(lineNumber): longer than \(inSamples ? longestSampleLine : longestHeaderLine) bytes"
      return result
    }
    if !line.isEmpty || !heldBreaks.isEmpty, let problem = complete(atEnd: true) {
      result.problem = problem.isEmpty ? nil : problem
      return result
    }
    if !inSamples {
      result.problem =
        headerLines == 0 ? "the file is empty" : "line \(lineNumber): the file ends before its first sample"
    }
    return result
  }

  /// Whether a header line's value starts with a double quote that the line does not close.
  static func opensQuotedValue(_ bytes: ArraySlice<UInt8>) -> Bool {
    guard let comma = bytes.firstIndex(of: UInt8(ascii: ",")) else { return false }
    let value = trim(bytes[(comma + 1)...])
    guard value.first == 0x22 else { return false }
    var index = value.index(after: value.startIndex)
    while index < value.endIndex {
      if value[index] == 0x22 {
        let next = value.index(after: index)
        guard next < value.endIndex, value[next] == 0x22 else { return false }
        index = value.index(after: next)
      } else {
        index = value.index(after: index)
      }
    }
    return true
  }

  static func trim(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var bytes = bytes
    while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
    while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
    return bytes
  }

  /// A sample: `-19.512`, `-265,868` (decimal comma), `12`, optionally in double quotes.
  /// Exponents, thousands separators and anything else are not numbers.
  public static func number(_ bytes: ArraySlice<UInt8>) -> Double? {
    var bytes = bytes
    if bytes.count >= 2, bytes.first == 0x22, bytes.last == 0x22 { bytes = trim(bytes.dropFirst().dropLast()) }
    guard !bytes.isEmpty, bytes.count <= longestSampleLine else { return nil }
    var negative = false
    if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
      negative = sign == UInt8(ascii: "-")
      bytes = bytes.dropFirst()
    }
    var mantissa: UInt64 = 0
    var digits = 0
    var fractionDigits = 0
    var separators = 0
    for byte in bytes {
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"):
        digits += 1
        if separators > 0 { fractionDigits += 1 }
        if digits <= 19 { mantissa = mantissa &* 10 &+ UInt64(byte - UInt8(ascii: "0")) }
      case UInt8(ascii: "."), UInt8(ascii: ","):
        separators += 1
      default:
        return nil
      }
    }
    guard digits > 0, separators <= 1 else { return nil }
    // Up to 15 digits both the mantissa and the power of ten are exact doubles, so one division
    // is the correctly rounded value, as parsing the text would give; longer ones are parsed.
    if digits <= 15 {
      let value = Double(mantissa) / powersOfTen[fractionDigits]
      return negative ? -value : value
    }
    var text = negative ? "-" : ""
    for byte in bytes { text.append(byte == UInt8(ascii: ",") ? "." : Character(Unicode.Scalar(byte))) }
    return Double(text)
  }

  private static let powersOfTen: [Double] = (0...15).map { exponent in
    (0..<exponent).reduce(1.0) { value, _ in value * 10 }
  }

  /// `key,value`: the key up to the first comma; the value after it, CSV quoting undone (`"1,70"`
  /// → `1,70`, `""` inside quotes → `"`), empty as nil.
  static func keyValue(_ bytes: ArraySlice<UInt8>) -> (key: String, value: String?) {
    guard let comma = bytes.firstIndex(of: UInt8(ascii: ",")) else {
      return (String(decoding: unquote(trim(bytes)), as: UTF8.self), nil)
    }
    let key = String(decoding: unquote(trim(bytes[..<comma])), as: UTF8.self)
    let raw = trim(bytes[(comma + 1)...])
    let value = String(decoding: unquote(raw), as: UTF8.self).trimmingSpaces()
    return (key, value.isEmpty ? nil : value)
  }

  /// A field without its surrounding double quotes and with `""` made `"`; a field that does not
  /// start with a quote is taken as written (a lone quote inside stays).
  static func unquote(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    guard bytes.count >= 2, bytes.first == 0x22 else { return Array(bytes) }
    var out: [UInt8] = []
    var index = bytes.index(after: bytes.startIndex)
    while index < bytes.endIndex {
      let byte = bytes[index]
      if byte == 0x22 {
        let next = bytes.index(after: index)
        if next < bytes.endIndex, bytes[next] == 0x22 {
          out.append(0x22)
          index = bytes.index(after: next)
          continue
        }
        // The closing quote: what follows it is not part of the value.
        break
      }
      out.append(byte)
      index = bytes.index(after: index)
    }
    return out
  }

  /// At most 40 bytes of a line, quoted, control characters as `?`, for a one-line message.
  static func quoted(_ bytes: ArraySlice<UInt8>) -> String {
    let cut = bytes.count > 40
    let shown = bytes.prefix(40).map { $0 < 0x20 || $0 == 0x7F ? UInt8(ascii: "?") : $0 }
    return "'" + String(decoding: shown, as: UTF8.self) + (cut ? "…" : "") + "'"
  }
}

extension String {
  fileprivate func trimmingSpaces() -> String {
    var scalars = Substring(self)
    while scalars.first == " " || scalars.first == "\t" { scalars = scalars.dropFirst() }
    while scalars.last == " " || scalars.last == "\t" { scalars = scalars.dropLast() }
    return String(scalars)
  }
}
