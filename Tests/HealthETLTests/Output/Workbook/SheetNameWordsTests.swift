import Testing

@testable import HealthETL

/// A sheet's tab reads as words, not as the job's file name (Pipelines/docs/daily.md, "`health.xlsx`").
@Suite struct SheetNameWordsTests {
  @Test func jobNamesReadAsWords() {
    #expect(JobName.words("heart-rate-per-day") == "Heart rate per day")
    #expect(JobName.words("hrv-per-day") == "HRV per day")
    #expect(JobName.words("vo2max-per-day") == "VO2 max per day")
    #expect(JobName.words("steps_per_week") == "Steps per week")
    #expect(JobName.words("sessions") == "Sessions")
    #expect(JobName.words("v1.2") == "V1.2")
    #expect(JobName.words("-") == "-")
  }
}
