import Foundation
import HealthExtract
import Testing

/// The ECG reader (Pipelines/docs/electrocardiograms.md, "Electrocardiograms") over hand-written files.
@Suite struct ECGReaderTests {
  static let english = """
    Name,Alex Example
    Date of Birth,"Mar 4, 1985"
    Recorded Date,2024-03-20 08:15:32 +0100
    Classification,Sinus Rhythm
    Symptoms,"Rapid, pounding, or fluttering heartbeat"
    Software Version,1.90
    Device,"Watch6,2"
    Sample Rate,512 hertz

    Lead,Lead I
    Unit,µV

    -19.512
    -22.107
    5

    """

  struct Read {
    var result: ECGReadResult
    var samples: [Double]
  }

  static func read(_ text: String, accept: Bool = true) -> Read {
    var samples: [Double] = []
    let result = ECGReader.read(bytes: Array(text.utf8), header: { _ in accept }, sample: { samples.append($0) })
    return Read(result: result, samples: samples)
  }

  @Test func readsTheHeaderAndEverySampleButNeverKeepsNameOrBirthDate() throws {
    let read = Self.read(Self.english)
    #expect(read.result.problem == nil)
    #expect(read.samples == [-19.512, -22.107, 5])
    #expect(read.result.samples == 3)
    let header = try #require(read.result.header)
    #expect(header.recordedDate == "2024-03-20 08:15:32 +0100")
    #expect(header.classification == "Sinus Rhythm")
    #expect(header.symptoms == "Rapid, pounding, or fluttering heartbeat")
    #expect(header.softwareVersion == "1.90")
    #expect(header.device == "Watch6,2")
    #expect(header.sampleRate == "512 hertz")
    #expect(header.lead == "Lead I")
    #expect(header.unit == "µV")
    #expect(header.averageHeartRate == nil)
    // The header type has no place for them: nothing of the first two lines survives.
    #expect(!String(describing: header).contains("Alex") && !String(describing: header).contains("1985"))
  }

  /// A decimal-comma locale: a sample line is one number, quoted or not; quoted header values keep
  /// their comma; keys in another language take the meaning of their position.
  @Test func decimalCommasAndLocalisedKeys() throws {
    let text =
      "\u{FEFF}Nome,Alex\r\nData de nascimento,\"4 de mar. de 1985\"\r\nData de registro,2024-03-21 09:00:00 -0300\r\n"
      + "Classificação,Ritmo sinusal\r\nSintomas,\r\nVersão do software,\"1,90\"\r\nDispositivo,\"Watch6,2\"\r\n"
      + "Taxa de amostragem,\"512 hertz\"\r\nFrequência cardíaca média,\"72,5 BPM\"\r\n\r\n"
      + "Derivação,Derivação I\r\nUnidade,µV\r\n\r\n-265,868\r\n\"12,5\"\r\n0\r\n-0,001"
    let read = Self.read(text)
    #expect(read.result.problem == nil)
    #expect(read.samples == [-265.868, 12.5, 0, -0.001])
    let header = try #require(read.result.header)
    #expect(header.recordedDate == "2024-03-21 09:00:00 -0300")
    #expect(header.classification == "Ritmo sinusal")
    #expect(header.symptoms == nil)
    #expect(header.softwareVersion == "1,90")
    #expect(header.sampleRate == "512 hertz")
    #expect(header.averageHeartRate == "72,5 BPM")
  }

  /// A localised file whose quoted name holds a line break (issue 31, item 6): the name's second
  /// line is part of it, so every key after it keeps its position and the file is an ECG. Before,
  /// `Example"` took the birth date's place, the birth date the Recorded Date's, and with no date
  /// and no rate where they belong the file was passed over as "not an ECG".
  @Test func aQuotedNameOverTwoLinesKeepsTheKeysAfterItInPlace() throws {
    let text =
      "Nome,\"Alex\r\nExample\"\r\nData de nascimento,\"4 de mar. de 1985\"\r\n"
      + "Data de registro,2024-03-21 09:00:00 -0300\r\nClassificação,Ritmo sinusal\r\nSintomas,\r\n"
      + "Versão do software,\"1,90\"\r\nDispositivo,\"Watch6,2\"\r\nTaxa de amostragem,\"512 hertz\"\r\n"
      + "Derivação,Derivação I\r\nUnidade,µV\r\n\r\n-265,868\r\nx"
    let read = Self.read(text)
    #expect(read.samples == [-265.868])
    // Line 14 is `x`: the two lines of the name count as two.
    #expect(read.result.problem == "line 14: 'x' is not a number (one sample in µV per line)")
    let header = try #require(read.result.header)
    #expect(header.recordedDate == "2024-03-21 09:00:00 -0300")
    #expect(header.classification == "Ritmo sinusal")
    #expect(header.device == "Watch6,2")
    #expect(header.sampleRate == "512 hertz")
    #expect(header.lead == "Derivação I")
    #expect(!String(describing: header).contains("Example"))
  }

  /// A quote that no line closes before an empty line or a sample joins no lines: each is read as
  /// written, as before.
  @Test func anUnclosedQuoteStopsAtTheSamples() throws {
    let read = Self.read("Name,\"Alex\nRecorded Date,2024-03-20 08:15:32 +0100\nSample Rate,512 hertz\n12\n13\n")
    #expect(read.samples == [12, 13])
    #expect(read.result.problem == nil)
    #expect(read.result.header?.recordedDate == "2024-03-20 08:15:32 +0100")
    #expect(read.result.header?.sampleRate == "512 hertz")
  }

  /// NUL, ESC and DEL in header values become spaces and are counted, as in export text: a NUL
  /// would cut the value short for a C client of health.sqlite.
  @Test func controlCharactersInHeaderValuesBecomeSpaces() throws {
    let text = Self.english.replacingOccurrences(of: "Sinus Rhythm", with: "Sinus\u{0}Rhythm\u{1B}")
      .replacingOccurrences(of: "Lead I", with: "Lead\u{7F}I")
    let read = Self.read(text)
    #expect(read.result.problem == nil)
    #expect(read.result.header?.classification == "Sinus Rhythm")
    #expect(read.result.header?.lead == "Lead I")
    #expect(read.result.replacedControlCharacters == 3)
  }

  @Test func aLineThatIsNotANumberEndsTheFileWithItsLineAndKeepsTheSamplesBefore() {
    let read = Self.read(Self.english.replacingOccurrences(of: "-22.107", with: "-22.1.07"))
    #expect(read.samples == [-19.512])
    #expect(read.result.problem == "line 14: '-22.1.07' is not a number (one sample in µV per line)")
  }

  @Test(arguments: [
    ("", "the file is empty"),
    ("Name,x\nRecorded Date,2024-03-20 08:15:32 +0100\n", "line 3: the file ends before its first sample"),
    ("Name,x\n" + String(repeating: "a", count: 2000) + "\n1\n", "line 2: longer than 1024 bytes"),
    (String(repeating: "Key,value\n", count: 40) + "1\n", "line 33: no sample after 32 header lines; not an ECG file"),
    ("Sample Rate,512 hertz\n1\n" + String(repeating: "1", count: 100) + "\n", "line 3: longer than 64 bytes"),
    ("Sample Rate,512 hertz\n1\n1e5\n", "line 3: '1e5' is not a number (one sample in µV per line)"),
  ])
  func notAnECGIsOneProblemWithItsLine(text: String, problem: String) {
    #expect(Self.read(text).result.problem == problem)
  }

  @Test func aRefusedHeaderStopsTheRead() {
    let read = Self.read(Self.english, accept: false)
    #expect(read.samples.isEmpty)
    #expect(read.result.samples == 0)
    #expect(read.result.problem == nil)
    #expect(read.result.header?.recordedDate == "2024-03-20 08:15:32 +0100")
  }

  @Test(arguments: [
    ("-19.512", -19.512), ("-265,868", -265.868), ("\"12,5\"", 12.5), ("+3", 3.0), ("7.", 7.0), (".5", 0.5),
  ])
  func samples(text: String, value: Double) {
    #expect(ECGReader.number(Array(text.utf8)[...]) == value)
  }

  @Test(arguments: ["", "-", ",", "1,2,3", "1.2.3", "1e3", "1 000", "--1", "1-", "NaN", "inf", "0x10"])
  func notSamples(text: String) {
    #expect(ECGReader.number(Array(text.utf8)[...]) == nil)
  }
}

/// Every committed fuzz input of the `ecg` harness, read with the harness's checks, so the corpus
/// runs in `make test` too.
@Suite struct ECGCorpusTests {
  @Test func everyCorpusFileIsReadWithoutSurprise() throws {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Fuzz/Corpus/ecg")
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    #expect(names.count >= 9)
    for name in names {
      let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(name)))
      var handed = 0
      let result = ECGReader.read(
        bytes: bytes, header: { _ in true },
        sample: { value in
          #expect(value.isFinite, "\(name)")
          handed += 1
        })
      #expect(result.samples == handed, "\(name)")
      #expect(!(result.problem ?? "").contains("\n"), "\(name)")
      if name == "edge-english.csv" { #expect(result.problem == nil && handed == 4) }
      if name == "edge-decimal-comma.csv" { #expect(result.problem == nil && handed == 4) }
      if name == "edge-not-an-ecg.csv" { #expect(result.problem == "line 3: the file ends before its first sample") }
    }
  }
}
