/// Every job kind, in the order `pipelines tables` and error messages list them. A new kind is a
/// file in this folder and a line here (see `JobKind`).
public enum JobKinds {
  public static let all: [any JobKind] = [
    SamplesJobKind(), SleepJobKind(), WorkoutsJobKind(), StatisticsJobKind(), ElementsJobKind(), DailyJobKind(),
    ReportJobKind(), ElectrocardiogramsJobKind(), ClinicalRecordsJobKind(), BeatsJobKind(), InfluxJobKind(),
  ]

  /// The kind a pipeline's `kind` names.
  public static func named(_ name: String) -> (any JobKind)? { all.first { $0.name == name } }
}
