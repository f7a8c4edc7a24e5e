/// What a Record's `type` identifier denotes.
public enum SampleKind: String, Sendable, Hashable, CaseIterable {
  case quantity
  case category
  /// Identifiers that are neither (`HKDataTypeSleepDurationGoal`, unknown future prefixes).
  case other
}

/// How HealthKit combines a quantity type's samples (`HKQuantityAggregationStyle`).
public enum AggregationStyle: String, Sendable, Hashable {
  case cumulative
  case discreteArithmetic
  case discreteTemporallyWeighted
  case discreteEquivalentContinuousLevel

  public var isCumulative: Bool { self == .cumulative }
}
