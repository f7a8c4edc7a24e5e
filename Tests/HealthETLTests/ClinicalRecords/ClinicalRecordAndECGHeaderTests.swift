import Foundation
import HealthExtract
import HealthModel
import Testing

@testable import HealthETL

/// The checks of the electrocardiograms and clinical-records jobs that decide what is read
/// (Pipelines/docs/electrocardiograms.md, "Electrocardiograms"; Pipelines/docs/clinical-records.md, "Clinical records").
@Suite struct ClinicalRecordAndECGHeaderTests {
  @Test(arguments: [
    ("/clinical-records/Procedure-488D.json", "clinical-records/Procedure-488D.json"),
    ("clinical-records/Observation-1.json", "clinical-records/Observation-1.json"),
  ])
  func aResourceLiesDirectlyInClinicalRecords(written: String, relative: String) throws {
    #expect(try ClinicalRecordMart.resourcePath(written).get() == relative)
  }

  @Test(arguments: [
    "../../x", "/etc/passwd", "clinical-records/../../x", "clinical-records/a/b.json", "clinical-records/",
    "clinical-records/..", "clinical-records/.", "/workout-routes/route.gpx", "clinical-records/a\nb.json", "",
  ])
  func anyOtherPathIsNeverLookedUp(written: String) {
    guard case .failure(let problem) = ClinicalRecordMart.resourcePath(written) else {
      Issue.record("\(written) was accepted")
      return
    }
    #expect(!problem.description.contains("\n"))
    #expect(written.isEmpty || problem.description.hasSuffix("is not a file in clinical-records/; not read"))
  }

  @Test func dstu2ProcedureImmunizationAndR4Observation() throws {
    let procedure = try FHIRResourceSummary.summarize(
      Array(
        """
        {"resourceType":"Procedure","id":"x","code":{"coding":[{"system":"http://www.ama-assn.org/go/cpt","code":"45378",
        "display":"Colonoscopy"}],"text":"COLONOSCOPY"},"performedPeriod":{"start":"2019-05-12T10:00:00-07:00","end":"2019-05-12"}}
        """.utf8))
    #expect(
      procedure
        == FHIRResourceSummary(
          resourceType: "Procedure", codeSystem: "http://www.ama-assn.org/go/cpt", code: "45378",
          display: "Colonoscopy", effective: "2019-05-12T10:00:00-07:00"))
    let immunization = try FHIRResourceSummary.summarize(
      Array(#"{"resourceType":"Immunization","vaccineCode":{"text":"Influenza"},"date":"2020-10-01"}"#.utf8))
    #expect(immunization.display == "Influenza" && immunization.code == nil && immunization.effective == "2020-10-01")
    let observation = try FHIRResourceSummary.summarize(
      Array(
        #"{"resourceType":"Observation","code":{"coding":[{"system":"http://loinc.org","code":"4548-4"}],"text":"HbA1c"},"effectiveDateTime":"2021","issued":"2021-02-01"}"#
          .utf8))
    #expect(observation.code == "4548-4" && observation.display == "HbA1c" && observation.effective == "2021")
    let patient = try FHIRResourceSummary.summarize(Array(#"{"resourceType":"Patient","name":[{"text":"A"}]}"#.utf8))
    #expect(patient == FHIRResourceSummary(resourceType: "Patient"))
  }

  @Test(arguments: [
    ("[1]", "not a FHIR resource: the document is an array"),
    (#"{"resourceType":"A","resourceType":"B"}"#, "not JSON"),
    ("{", "not JSON"),
    (String(repeating: "[", count: 100_000), "not JSON"),
  ])
  func notAResource(text: String, problem: String) {
    #expect(throws: FHIRResourceProblem.self) { try FHIRResourceSummary.summarize(Array(text.utf8)) }
    do { _ = try FHIRResourceSummary.summarize(Array(text.utf8)) } catch {
      #expect(error.description.hasPrefix(problem))
    }
  }

  static func header(date: String? = "2024-03-20 08:15:32 +0100", rate: String? = "512 hertz", unit: String? = "µV")
    -> ECGHeader
  {
    var header = ECGHeader()
    header.recordedDate = date
    header.sampleRate = rate
    header.unit = unit
    header.averageHeartRate = "72,5 BPM"
    return header
  }

  @Test func aHeaderNeedsADateAndARate() throws {
    let made = try ElectrocardiogramHeader.make(Self.header()).get()
    #expect(made.recorded == Instant(seconds: 1_710_918_932))
    #expect(made.sampleRate == 512)
    #expect(made.averageHeartRate == 72.5)
  }

  static let unusable: [(String?, String?, String?, String)] = [
    (nil, "512 hertz", "µV", "no Recorded Date line before the first sample; not an ECG file"),
    (
      "20.03.2024 08:15", "512 hertz", "µV",
      "Recorded Date '20.03.2024 08:15' is not a date like 2024-03-20 08:15:32 +0100"
    ),
    ("2024-03-20 08:15:32 +0100", nil, "µV", "no Sample Rate line before the first sample; not an ECG file"),
    (
      "2024-03-20 08:15:32 +0100", "0 hertz", "µV",
      "Sample Rate '0 hertz' is not a rate such as 512 hertz (1 – 20,000 Hz)"
    ),
    // Below one sample a second (issue 31, item 6: this was read as a rate).
    (
      "2024-03-20 08:15:32 +0100", "0.00001 hertz", "µV",
      "Sample Rate '0.00001 hertz' is not a rate such as 512 hertz (1 – 20,000 Hz)"
    ),
    ("2024-03-20 08:15:32 +0100", "fast", "µV", "Sample Rate 'fast' is not a rate such as 512 hertz (1 – 20,000 Hz)"),
    ("2024-03-20 08:15:32 +0100", "512 hertz", "mV", "Unit 'mV': only samples in µV are read"),
  ]

  @Test(arguments: unusable)
  func aHeaderThatCannotBeUsed(date: String?, rate: String?, unit: String?, problem: String) {
    guard case .failure(let found) = ElectrocardiogramHeader.make(Self.header(date: date, rate: rate, unit: unit))
    else {
      Issue.record("accepted")
      return
    }
    #expect(found.description == problem)
  }
}
