/// Every job kind, in the order `pipelines tables` and error messages list them. A new kind is a
/// folder of its own and a line in `subjects` (see `JobKind`); what it adds to the table of days
/// (`JobKind.dayColumns`) reaches the daily kind from here.
public enum JobKinds {
  /// Every kind but daily and the report, which read what the others compute.
  private static let subjects: [any JobKind] = [
    SamplesJobKind(), SleepJobKind(), WorkoutsJobKind(), StatisticsJobKind(), ElementsJobKind(),
    ElectrocardiogramsJobKind(), ClinicalRecordsJobKind(), BeatsJobKind(), MindfulJobKind(),
  ]

  public static let all: [any JobKind] =
    subjects + [DailyJobKind(contributions: subjects.flatMap(\.dayColumns)), ReportJobKind()]

  /// The kind a pipeline's `kind` names.
  public static func named(_ name: String) -> (any JobKind)? { all.first { $0.name == name } }
}
