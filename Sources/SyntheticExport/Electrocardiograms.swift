internal import Glibc
internal import HealthModel

/// The language the Watch's ECG files are written in: the folder's name, the classification and
/// the decimal separator follow the phone's locale.
public enum ECGLocale: String, Sendable, CaseIterable {
  /// `electrocardiograms/`, `Sinus Rhythm`, `-19.512`.
  case english = "en"
  /// A decimal-comma locale (Brazilian Portuguese): `eletrocardiogramas/`, `Ritmo sinusal`,
  /// `-265,868`, and header values holding a comma quoted (`"1,90"`).
  case portuguese = "pt"

  var folder: String { self == .english ? "electrocardiograms" : "eletrocardiogramas" }
}

/// One ECG recording of the sample: when, its rhythm, and its file's name.
struct PlannedRecording {
  var recorded: Int64
  var heartRate: Double
  var classification: String
  var fileName: String
}

extension SampleModel {
  /// Seconds of a recording, and its rate: the Watch's ECG app records 30 s at 512 Hz.
  static let ecgSeconds = 30
  static let ecgSampleRate = 512

  /// `count` recordings spread evenly over the days, each on a morning between 7:00 and 9:00
  /// local; a second one on a day gets `_1` in its name, as the Health app names them.
  func electrocardiograms(count: Int, locale: ECGLocale) -> [PlannedRecording] {
    guard count > 0 else { return [] }
    var recordings: [PlannedRecording] = []
    var perDay: [Int: Int] = [:]
    for index in 0..<count {
      let day = index * days / count
      var r = rng(.electrocardiogram, index)
      let recorded = instant(date(day), 7 * 3600 + r.seconds(0...7199))
      let heartRate = r.double(58, 84)
      let inconclusive = r.chance(0.15)
      let classification: String
      switch (locale, inconclusive) {
      case (.english, false): classification = "Sinus Rhythm"
      case (.english, true): classification = "Inconclusive"
      case (.portuguese, false): classification = "Ritmo sinusal"
      case (.portuguese, true): classification = "Inconclusivo"
      }
      var name: [UInt8] = Array("ecg_".utf8)
      LocalTimeFormatter.appendDate(date(day), to: &name)
      let repeatOnDay = perDay[day, default: 0]
      perDay[day] = repeatOnDay + 1
      if repeatOnDay > 0 { name += Array("_\(repeatOnDay)".utf8) }
      recordings.append(
        PlannedRecording(
          recorded: recorded, heartRate: heartRate, classification: classification,
          fileName: locale.folder + "/" + String(decoding: name + Array(".csv".utf8), as: UTF8.self)))
    }
    return recordings
  }

  /// The CSV file of a recording, as the Health app writes it: the header block, then one sample
  /// in µV per line with three decimals. The waveform is a sum of Gaussian P, Q, R, S and T waves
  /// per beat (R ≈ 1,100 µV), beat-to-beat variation, baseline wander and noise.
  func electrocardiogramFile(_ recording: PlannedRecording, index: Int, locale: ECGLocale) -> ByteSink {
    var out = ByteSink(target: .memory, offsetSeconds: zone.offset(at: Instant(seconds: recording.recorded)))
    let comma = locale == .portuguese
    out.put("Name,Alex Example\n")
    out.put(comma ? "Date of Birth,\"4 de mar. de 1985\"\n" : "Date of Birth,\"Mar 4, 1985\"\n")
    out.put("Recorded Date,")
    out.date(recording.recorded)
    out.put("\nClassification,")
    out.put(Array(recording.classification.utf8))
    out.put("\nSymptoms,\n")
    out.put(comma ? "Software Version,\"1,90\"\n" : "Software Version,1.90\n")
    out.put("Device,\"Watch6,2\"\nSample Rate,512 hertz\n\nLead,Lead I\nUnit,µV\n\n")

    var r = rng(.electrocardiogram, index &+ 1_000_003)
    let rate = Double(Self.ecgSampleRate)
    var beatStart = -r.double(0, 0.6)
    var beatLength = 60 / recording.heartRate
    var nextBeatLength = beatLength
    for sample in 0..<(Self.ecgSeconds * Self.ecgSampleRate) {
      let t = Double(sample) / rate
      while t >= beatStart + beatLength {
        beatStart += beatLength
        beatLength = nextBeatLength
        nextBeatLength = 60 / recording.heartRate * (1 + 0.04 * r.gaussian())
      }
      let phase = t - beatStart
      var value = Self.wave(phase, beatLength: beatLength)
      value += 60 * sin(2 * Double.pi * 0.25 * t) + 8 * r.gaussian()
      let scaled = Int64((value * 1000).rounded())
      if scaled < 0 { out.byte(UInt8(ascii: "-")) }
      out.int(Int64(scaled.magnitude / 1000))
      out.byte(comma ? UInt8(ascii: ",") : UInt8(ascii: "."))
      out.padded(Int64(scaled.magnitude % 1000), width: 3)
      out.byte(0x0A)
    }
    return out
  }

  /// One beat's voltage at `phase` seconds after it starts, µV.
  static func wave(_ phase: Double, beatLength: Double) -> Double {
    func bump(_ center: Double, _ width: Double, _ height: Double) -> Double {
      let x = (phase - center) / width
      return height * exp(-0.5 * x * x)
    }
    let tCenter = 0.30 + 0.18 * beatLength
    return bump(0.10, 0.025, 120) + bump(0.185, 0.008, -150) + bump(0.20, 0.010, 1100) + bump(0.215, 0.010, -280)
      + bump(tCenter, 0.045, 260)
  }
}
