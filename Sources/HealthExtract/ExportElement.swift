/// The element names of an Apple Health export (every element of the v14 DTD plus the inline route
/// `Location` of old exports). Anything else is `.other` and is kept generically by the caller.
public enum ExportElement: Int, CaseIterable, Sendable {
  case healthData, exportDate, me
  case record, metadataEntry, heartRateVariabilityMetadataList, instantaneousBeatsPerMinute
  case correlation
  case workout, workoutActivity, workoutEvent, workoutStatistics, workoutRoute, fileReference, location
  case activitySummary, clinicalRecord, audiogram, sensitivityPoint
  case visionPrescription, rightEye, leftEye, attachment
  case other

  /// The name as it appears in the XML (`nil` for `.other`).
  public var xmlName: String? {
    switch self {
    case .other: return nil
    case .heartRateVariabilityMetadataList: return "HeartRateVariabilityMetadataList"
    case .instantaneousBeatsPerMinute: return "InstantaneousBeatsPerMinute"
    default:
      let name = String(describing: self)
      return name.prefix(1).uppercased() + name.dropFirst()
    }
  }
}

/// Attribute names the stages read. Others stay reachable through `ElementAttributes.forEach`.
public enum ExportAttribute: Int, CaseIterable, Sendable {
  case type, unit, value, sourceName, sourceVersion, device, creationDate, startDate, endDate
  case key, locale, workoutActivityType, duration, durationUnit
  case totalDistance, totalDistanceUnit, totalEnergyBurned, totalEnergyBurnedUnit
  case date, average, minimum, maximum, sum, path, uuid, bpm, time, dateComponents
  case latitude, longitude, altitude
  case course, speed, horizontalAccuracy, verticalAccuracy
  /// What iOS 8–9 exports wrote where later ones write `sourceName`.
  case source
  /// A discrete quantity written as a day aggregate by iOS 8–9 exports (`min`, `max`, `average`,
  /// `recordCount` and no `value`); `recordCount` also on cumulative ones.
  case min, max, recordCount
  /// Also of iOS 8–9 records.
  case sessionId
  /// Withings' `Sleep Stage` attribute of iOS 8–9 sleep records, as it arrives once the byte
  /// filter has rewritten the space in its name (`AttributeNameRepair`).
  case sleepStage

  public var xmlName: String {
    switch self {
    case .sleepStage: return "Sleep_Stage"
    default: return String(describing: self)
    }
  }
}
