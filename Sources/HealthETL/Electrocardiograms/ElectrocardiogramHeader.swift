import HealthExtract
import HealthModel

/// The values of an ECG file's header block that a row needs, checked.
struct ElectrocardiogramHeader {
  var recorded: Instant
  var classification: String?
  var symptoms: String?
  var sampleRate: Double
  var averageHeartRate: Double?
  var device: String?
  var softwareVersion: String?
  var lead: String?
  var unit: String?

  struct Problem: Error, CustomStringConvertible {
    var description: String
  }

  /// Highest sample rate taken as true: the Watch records at 512 Hz, clinical ECGs at up to a few kHz.
  static let fastestSampleRate = 20_000.0
  /// Lowest: one sample a second. A slower rate (`0.00001 hertz`) would spread a 30 s recording
  /// over a month of `offset_s`.
  static let slowestSampleRate = 1.0

  /// Whether a header block is an ECG's, however broken: it has a date or a sample rate. Other
  /// CSV files that happen to lie one folder below the export are none of HealthETL's business.
  static func looksLikeECG(_ header: ECGHeader) -> Bool {
    header.recordedDate.flatMap { HealthDateParser.parse($0) } != nil || header.sampleRate.flatMap(leadingNumber) != nil
  }

  static func make(_ header: ECGHeader) -> Result<ElectrocardiogramHeader, Problem> {
    guard let date = header.recordedDate else {
      return .failure(Problem(description: "no Recorded Date line before the first sample; not an ECG file"))
    }
    guard let recorded = HealthDateParser.parse(date)?.instant else {
      return .failure(
        Problem(
          description: "Recorded Date '\(PrintableExcerpt.of(date))' is not a date like 2024-03-20 08:15:32 +0100"))
    }
    guard let rateText = header.sampleRate else {
      return .failure(Problem(description: "no Sample Rate line before the first sample; not an ECG file"))
    }
    guard let rate = leadingNumber(rateText), rate >= slowestSampleRate, rate <= fastestSampleRate else {
      return .failure(
        Problem(
          description: "Sample Rate '\(PrintableExcerpt.of(rateText))' is not a rate such as 512 hertz (1 – 20,000 Hz)")
      )
    }
    if let unit = header.unit, !["µv", "μv", "uv"].contains(unit.lowercased()) {
      return .failure(Problem(description: "Unit '\(PrintableExcerpt.of(unit))': only samples in µV are read"))
    }
    return .success(
      ElectrocardiogramHeader(
        recorded: recorded, classification: header.classification, symptoms: header.symptoms, sampleRate: rate,
        averageHeartRate: header.averageHeartRate.flatMap(leadingNumber), device: header.device,
        softwareVersion: header.softwareVersion, lead: header.lead, unit: header.unit))
  }

  /// The number a value starts with (`512 hertz` → 512, `72,5 BPM` → 72.5); nil when it starts
  /// with none.
  static func leadingNumber(_ text: String) -> Double? {
    let number = text.prefix { $0.isASCII && ($0.isNumber || $0 == "." || $0 == ",") }
    guard !number.isEmpty else { return nil }
    return ECGReader.number(Array(number.utf8)[...])
  }

}
