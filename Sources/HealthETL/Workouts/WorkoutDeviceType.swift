public import HealthModel

/// `deviceTypeCode` from every clue a workout carries (Pipelines/docs/workouts.md, "Server records").
extension WorkoutServerRecord {
  /// In order, the first clue that decides:
  ///
  /// 1. the device's `model:` — `Watch` → `WATCH`, `iPhone` → `PHONE`, any other model → `ETC`;
  /// 2. without a model, its `hardware:` — `Watch…` (`Watch6,2`) → `WATCH`, `iPhone…` → `PHONE`;
  /// 3. the source name — contains `Watch` → `WATCH`, `iPhone` → `PHONE` (case-sensitive);
  /// 4. a source named `Apple…` (Apple's own, without a device: watchOS 4 wrote workouts as
  ///    "Apple") by its OS version — the device's `software:`, else `sourceVersion`: major 1–7 can
  ///    only be watchOS (HealthKit came to the iPhone with iOS 8) → `WATCH`; major 12–18 only iOS
  ///    (watchOS went from 11 to 26) → `PHONE`; 8–11 and 26 on are both and decide nothing;
  /// 5. otherwise `ETC`. Third-party apps (Garmin Connect 5, Runtastic 7.1) are never judged by
  ///    their version: their numbers are app versions, not OS versions.
  public static func deviceTypeCode(
    device: DeviceDescription?, sourceName: String, sourceVersion: String?
  ) -> String {
    if let model = device?.model, !model.isEmpty {
      return deviceTypeCode(deviceModel: model, sourceName: sourceName)
    }
    if let hardware = device?.hardware {
      if hardware.hasPrefix("Watch") { return "WATCH" }
      if hardware.hasPrefix("iPhone") { return "PHONE" }
    }
    if sourceName.contains("Watch") || sourceName.contains("iPhone") {
      return deviceTypeCode(deviceModel: nil, sourceName: sourceName)
    }
    if sourceName.hasPrefix("Apple"), let version = device?.software ?? sourceVersion,
      let major = Int(version.prefix { $0 != "." })
    {
      if (1...7).contains(major) { return "WATCH" }
      if (12...18).contains(major) { return "PHONE" }
    }
    return "ETC"
  }
}
