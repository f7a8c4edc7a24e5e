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
  /// `HKWasUserEntered="1"`, which iOS 8 wrote as an attribute of the record where later exports
  /// write a `MetadataEntry`.
  case wasUserEntered

  public var xmlName: String {
    switch self {
    case .sleepStage: return "Sleep_Stage"
    case .wasUserEntered: return "HKWasUserEntered"
    default: return String(describing: self)
    }
  }
}

extension ExportElement {
  /// Whether an export ever holds `child` directly inside `self`: the v14 DTD, with what exports
  /// write that it leaves out (a `WorkoutActivity` and its events and statistics since iOS 16,
  /// the inline route `Location` of old exports). An element HealthETL does not know may hold
  /// and be held by anything. The recovering read takes a known element inside a known one that
  /// never holds it as the sign of a missing end tag (Pipelines/docs/input.md, "Bad input").
  @inline(__always) func holds(_ child: ExportElement) -> Bool {
    Self.children[rawValue] & (1 << UInt32(child.rawValue)) != 0
  }

  /// Per element, the bit set of the elements it holds (bit = raw value).
  private static let children: [UInt32] = {
    func bits(_ elements: [ExportElement]) -> UInt32 { elements.reduce(0) { $0 | 1 << UInt32($1.rawValue) } }
    let all = bits(ExportElement.allCases)
    return ExportElement.allCases.map { parent -> UInt32 in
      let other = bits([.other])
      switch parent {
      case .other: return all
      case .healthData:
        return other
          | bits([
            .exportDate, .me, .record, .correlation, .workout, .activitySummary, .clinicalRecord, .audiogram,
            .visionPrescription,
          ])
      case .record: return other | bits([.metadataEntry, .heartRateVariabilityMetadataList])
      case .heartRateVariabilityMetadataList: return other | bits([.instantaneousBeatsPerMinute])
      case .correlation: return other | bits([.metadataEntry, .record])
      case .workout:
        return other | bits([.metadataEntry, .workoutActivity, .workoutEvent, .workoutRoute, .workoutStatistics])
      case .workoutActivity: return other | bits([.metadataEntry, .workoutEvent, .workoutStatistics])
      case .workoutEvent: return other | bits([.metadataEntry])
      case .workoutRoute: return other | bits([.metadataEntry, .fileReference, .location])
      case .audiogram: return other | bits([.metadataEntry, .sensitivityPoint])
      case .visionPrescription: return other | bits([.rightEye, .leftEye, .attachment, .metadataEntry])
      case .exportDate, .me, .metadataEntry, .instantaneousBeatsPerMinute, .workoutStatistics, .fileReference,
        .location, .activitySummary, .clinicalRecord, .sensitivityPoint, .rightEye, .leftEye, .attachment:
        return other
      }
    }
  }()
}
