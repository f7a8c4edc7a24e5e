public import HealthModel

/// One workout in the server's record format (Pipelines/docs/workouts.md, "Server records"): exactly
/// seven string fields.
public struct WorkoutServerRecord: Sendable, Hashable {
  /// Local date of the workout's end, `yyyyMMdd`.
  public var recordDate: String
  /// The activity type's code from `Pipelines/workout-codes.json`.
  public var execTypeCode: String
  /// Local start, `yyyyMMddHHmmss`.
  public var execStartTime: String
  /// Local end, `yyyyMMddHHmmss`.
  public var execEndTime: String
  /// Whole seconds of `duration` (or of end − start without one).
  public var execRuntime: String
  /// `WATCH`, `PHONE` or `ETC`.
  public var deviceTypeCode: String
  /// The workout id, upper-case.
  public var recordUuid: String

  /// A record from its seven fields.
  public init(
    recordDate: String, execTypeCode: String, execStartTime: String, execEndTime: String, execRuntime: String,
    deviceTypeCode: String, recordUuid: String
  ) {
    self.recordDate = recordDate
    self.execTypeCode = execTypeCode
    self.execStartTime = execStartTime
    self.execEndTime = execEndTime
    self.execRuntime = execRuntime
    self.deviceTypeCode = deviceTypeCode
    self.recordUuid = recordUuid
  }

  /// The values in the order of the server contract (`WorkoutTables.records`).
  public var fieldValues: [String] {
    [recordDate, execTypeCode, execStartTime, execEndTime, execRuntime, deviceTypeCode, recordUuid]
  }

  /// The record of `workout`. "Local" is the workout's own `HKTimeZone` when `ownZone` could be
  /// loaded for it, else the run's zone.
  public init(
    workout: WorkoutElement, id: String, codes: WorkoutCodeTable, ownZone: ZoneRules?, runZone: ZoneRules
  ) {
    let zone = ownZone ?? runZone
    self.init(
      recordDate: LocalTimeFormatter.compact(workout.end, offsetSeconds: zone.offset(at: workout.end), withTime: false),
      execTypeCode: codes.code(forActivity: workout.activityType),
      execStartTime: LocalTimeFormatter.compact(
        workout.start, offsetSeconds: zone.offset(at: workout.start), withTime: true),
      execEndTime: LocalTimeFormatter.compact(workout.end, offsetSeconds: zone.offset(at: workout.end), withTime: true),
      execRuntime: String(Self.runtimeSeconds(duration: workout.duration, start: workout.start, end: workout.end)),
      deviceTypeCode: Self.deviceTypeCode(
        device: workout.device, sourceName: workout.sourceName, sourceVersion: workout.sourceVersion),
      recordUuid: id.uppercased())
  }

  /// `execRuntime`: the `duration` text × its unit's seconds, rounded half-up to the millisecond,
  /// then floored — all in exact decimal arithmetic, because binary floating point puts values
  /// such as 0.083325 min (exactly 4.9995 s, so 5.000 s → 5) just below the half (→ 4).
  /// Without a usable duration (missing, not a number, negative, or not in a time unit): end − start.
  public static func runtimeSeconds(duration: WorkoutElement.Quantity?, start: Instant, end: Instant) -> Int64 {
    runtimeSeconds(durationText: duration?.text, unit: duration?.unit, start: start, end: end)
  }

  /// As `runtimeSeconds(duration:start:end:)`, from the `duration` and `durationUnit` texts.
  public static func runtimeSeconds(durationText: String?, unit: String?, start: Instant, end: Instant) -> Int64 {
    if let durationText, let value = ExactDecimal(durationText), !value.isNegative,
      let seconds = WorkoutUnits.seconds(value, unit: unit),
      // For x ≥ 0, floor(round_half_up(x, 3 decimals)) = floor(x + 0.0005).
      let whole = (seconds + ExactDecimal("0.0005")!).integerPart
    {
      return whole
    }
    return end - start
  }

  /// `WATCH` / `PHONE` / `ETC` by the classes of Pipelines/docs/samples.md, "Source priority": the
  /// device's model, else the source name.
  public static func deviceTypeCode(deviceModel: String?, sourceName: String) -> String {
    switch SourceClass.classify(deviceModel: deviceModel, sourceName: sourceName) {
    case .appleWatch: return "WATCH"
    case .iPhone: return "PHONE"
    case .other: return "ETC"
    }
  }
}
