/// The tables of an electrocardiograms job, declared once (Pipelines/README.md,
/// "Electrocardiograms"). Neither holds the name or the date of birth an ECG file starts with.
public enum ElectrocardiogramTables {
  /// `ecg_recordings.csv`: one row per ECG file read.
  public static let recordings = TableSchema(
    "recordings", rows: "one row per ECG recording, in the order the files are read",
    defaultFile: "ecg_recordings.csv",
    columns: [
      .localTime("`recorded` on the local clock, `YYYY-MM-DD HH:MM:SS`"),
      .instant("recorded", "`Recorded Date`: when the recording started"),
      .text("recording", "the file's path in the export (`electrocardiograms/ecg_2024-03-20.csv`)"),
      .text("classification", "`Classification` as written (`Sinus Rhythm`, `Atrial Fibrillation`, localised)"),
      .text("symptoms", "`Symptoms` as written; empty when none were logged"),
      .number("sample_rate_hz", unit: "Hz", precision: .asRecorded, "`Sample Rate` (`512 hertz`)"),
      .integer("samples", unit: "count", "samples in the file (up to a problem, when it has one)"),
      .number(
        "duration_s", unit: "s", precision: .decimals(3), display: .decimals(3), "samples ÷ sample rate"),
      .measure(
        "average_heart_rate", unit: "count/min", "the file's average heart rate line; empty when it has none"),
      .text("device", "`Device` (`Watch6,2`)"),
      .text("software_version", "`Software Version` (`1.90`)"),
      .text("lead", "`Lead` (`Lead I`)"),
      .text("unit", "`Unit` of the samples (`µV`)"),
      .text("problem", "why the file could not be read to its end (its samples up to there are kept); empty"),
    ])

  /// `ecg_samples.csv`: every sample of every recording.
  public static let samples = TableSchema(
    "samples", rows: "one row per sample, recordings in the order of `recordings`, samples in file order",
    defaultFile: "ecg_samples.csv",
    columns: [
      .text("recording", "the recording's `recording` (its file)"),
      .number(
        "offset_s", unit: "s", precision: .asRecorded, display: .decimals(4),
        "seconds from the recording's start: sample index ÷ sample rate"),
      .number(
        "microvolts", unit: "µV", precision: .asRecorded, "the sample as written (a decimal comma read as a point)"),
    ])

  public static let all = [recordings, samples]
}
