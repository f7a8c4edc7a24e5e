/// What to call a device model in words a person knows: AirPods and Beats write their Bluetooth
/// product id as the model (`model:0x200f`), which reads as a code, not a device
/// (Pipelines/report/DATA.md, "export"). The model stays as written in every CSV and in
/// `run.json`; only what the report and `inspect` show is named.
public enum DeviceModelName {
  /// Apple's Bluetooth product ids of AirPods, as the open-source Bluetooth Battery Meter
  /// (github.com/maniacx/Bluetooth-Battery-Meter, `lib/devices/airpods/deviceConfigs/*.js`,
  /// each file's `key`) reads them from the headphones: AirPods1stGen.js `2002`,
  /// AirPods2ndGen.js `200F`, AirPods3rdGen.js `2013`, AirPods4thGen.js `2019`,
  /// AirPods4thGenANC.js `201B`, AirPodsPro.js `200E`, AirPodsPro2ndGen.js `2014`,
  /// AirPodsPro2ndGenUsbC.js `2024`, AirPodsPro3rdGen.js `2027`, AirPodsMax.js `200A`,
  /// AirPodsMaxUsbC.js `201F`. Only ids with such a source are listed.
  static let airPods: [UInt16: String] = [
    0x2002: "AirPods (1st generation)",
    0x200F: "AirPods (2nd generation)",
    0x2013: "AirPods (3rd generation)",
    0x2019: "AirPods 4",
    0x201B: "AirPods 4 with noise cancellation",
    0x200E: "AirPods Pro",
    0x2014: "AirPods Pro (2nd generation)",
    0x2024: "AirPods Pro (2nd generation, USB-C)",
    0x2027: "AirPods Pro 3",
    0x200A: "AirPods Max",
    0x201F: "AirPods Max (USB-C)",
  ]

  /// `AirPods (2nd generation) (0x200f)` for a known product id, `AirPods or Beats headphones
  /// (0x2012)` for another id of Apple's audio range `0x20xx`, any other model as written. The
  /// code stays in the name, so what the export wrote is still there to look up.
  public static func shown(_ model: String) -> String {
    guard let id = productID(model) else { return model }
    return "\(airPods[id] ?? "AirPods or Beats headphones") (\(model))"
  }

  /// The id of `0x` and four hex digits of `0x20xx`; nil for anything else.
  static func productID(_ model: String) -> UInt16? {
    let bytes = Array(model.utf8)
    guard bytes.count == 6, bytes[0] == UInt8(ascii: "0"), bytes[1] | 0x20 == UInt8(ascii: "x"),
      let id = UInt16(String(decoding: bytes[2...], as: UTF8.self), radix: 16), id >> 8 == 0x20
    else { return nil }
    return id
  }
}
