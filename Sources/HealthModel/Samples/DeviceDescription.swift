/// The fields of a Record's `device` text, which is an `HKDevice` description dump:
/// `<<HKDevice: 0x…>, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:9.1>`.
public struct DeviceDescription: Sendable, Hashable {
  public var name: String?
  public var manufacturer: String?
  public var model: String?
  public var hardware: String?
  public var software: String?

  public init(
    name: String? = nil, manufacturer: String? = nil, model: String? = nil, hardware: String? = nil,
    software: String? = nil
  ) {
    self.name = name
    self.manufacturer = manufacturer
    self.model = model
    self.hardware = hardware
    self.software = software
  }

  /// Keys HKDevice prints. Values may themselves contain ", " (`hardware:Watch6,2`), so a field ends
  /// only where the next known key starts.
  static let keys = [
    "name", "manufacturer", "model", "hardware", "software", "firmware", "localIdentifier",
    "UDIDeviceIdentifier", "creation date",
  ]

  /// Parses the description; text that is not an HKDevice dump yields a device whose `name` is the
  /// whole text, so that nothing is dropped.
  public init(parsing text: String) {
    var body = Substring(text)
    if body.hasPrefix("<<"), let close = body.firstIndex(of: ">") {
      body = body[body.index(after: close)...]
      if body.hasSuffix(">") { body = body.dropLast() }
    } else {
      self.init(name: text.isEmpty ? nil : text)
      return
    }
    // Locate ", key:" markers in order of appearance.
    var marks: [(key: String, keyStart: Substring.Index, valueStart: Substring.Index)] = []
    var searchFrom = body.startIndex
    while searchFrom < body.endIndex, let comma = body[searchFrom...].firstIndex(of: ",") {
      let afterComma = body.index(after: comma)
      let rest = body[afterComma...].drop(while: { $0 == " " })
      for key in Self.keys where rest.hasPrefix(key + ":") {
        marks.append((key, comma, rest.index(rest.startIndex, offsetBy: key.count + 1)))
        break
      }
      searchFrom = afterComma
    }
    var fields: [String: String] = [:]
    for (index, mark) in marks.enumerated() {
      let end = index + 1 < marks.count ? marks[index + 1].keyStart : body.endIndex
      fields[mark.key] = String(body[mark.valueStart..<end])
    }
    self.init(
      name: fields["name"], manufacturer: fields["manufacturer"], model: fields["model"],
      hardware: fields["hardware"], software: fields["software"])
  }
}
