/// The tables of an electrocardiograms job, declared once (Pipelines/README.md,
/// "Electrocardiograms"). Neither holds the name or the date of birth an ECG file starts with.
public enum ElectrocardiogramTables {
  /// `ecg_recordings.csv`: one row per ECG file read.
  static let recordings = RowTable<ElectrocardiogramRecordingRow>(
    "recordings", rows: "one row per ECG recording, in the order the files are read",
    defaultFile: "ecg_recordings.csv",
    columns: [
      .localTime("`recorded` on the local clock, `YYYY-MM-DD HH:MM:SS`") { $0.header.recorded },
      .instant("recorded", "`Recorded Date`: when the recording started") { $0.header.recorded },
      .text("recording", "the file's path in the export (`electrocardiograms/ecg_2024-03-20.csv`)") { $0.file },
      .text("classification", "`Classification` as written (`Sinus Rhythm`, `Atrial Fibrillation`, localised)") {
        $0.header.classification
      },
      .text("symptoms", "`Symptoms` as written; empty when none were logged") { $0.header.symptoms },
      .number("sample_rate_hz", unit: "Hz", precision: .asRecorded, "`Sample Rate` (`512 hertz`)") {
        $0.header.sampleRate
      },
      .integer("samples", unit: "count", "samples in the file (up to a problem, when it has one)") {
        Int64($0.samples)
      },
      .number(
        "duration_s", unit: "s", precision: .decimals(3), display: .decimals(3), "samples ÷ sample rate"
      ) { Double($0.samples) / $0.header.sampleRate },
      .measure(
        "average_heart_rate", unit: "count/min", "the file's average heart rate line; empty when it has none"
      ) { $0.header.averageHeartRate },
      .text("device", "`Device` (`Watch6,2`)") { $0.header.device },
      .text("software_version", "`Software Version` (`1.90`)") { $0.header.softwareVersion },
      .text("lead", "`Lead` (`Lead I`)") { $0.header.lead },
      .text("unit", "`Unit` of the samples (`µV`)") { $0.header.unit },
      .text("problem", "why the file could not be read to its end (its samples up to there are kept); empty") {
        $0.problem
      },
    ])

  /// `ecg_samples.csv`: every sample of every recording.
  static let samples = RowTable<ElectrocardiogramSampleRow>(
    "samples", rows: "one row per sample, recordings in the order of `recordings`, samples in file order",
    defaultFile: "ecg_samples.csv",
    columns: [
      .text("recording", "the recording's `recording` (its file)") { $0.recording },
      .number(
        "offset_s", unit: "s", precision: .asRecorded, display: .decimals(4),
        "seconds from the recording's start: sample index ÷ sample rate"
      ) { $0.offset },
      .number(
        "microvolts", unit: "µV", precision: .asRecorded, "the sample as written (a decimal comma read as a point)"
      ) { $0.microvolts },
    ])

  public static let all = [recordings.schema, samples.schema]
}

/// A row of `recordings`: one ECG file read, as far as it could be.
struct ElectrocardiogramRecordingRow {
  /// The file's path in the export.
  let file: String
  let header: ElectrocardiogramHeader
  /// Samples read.
  let samples: Int
  /// Why the file could not be read to its end; nil when it was.
  let problem: String?
}

/// A row of `samples`: one sample of a recording.
struct ElectrocardiogramSampleRow {
  /// The recording's file.
  let recording: String
  /// Seconds from the recording's start.
  let offset: Double
  let microvolts: Double
}
