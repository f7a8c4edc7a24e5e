import HealthModel
import Testing

@Suite struct DeviceAndCategoryTests {
  @Test func parsesAWatchDevice() {
    let device = DeviceDescription(
      parsing:
        "<<HKDevice: 0x3035adf90>, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:9.1>"
    )
    #expect(device.name == "Apple Watch")
    #expect(device.manufacturer == "Apple Inc.")
    #expect(device.model == "Watch")
    #expect(device.hardware == "Watch6,2")
    #expect(device.software == "9.1")
  }

  @Test func parsesNewerDevicesWithCreationDate() {
    let device = DeviceDescription(
      parsing:
        "<<HKDevice: 0x3035adf90>, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,3, software:16.1.2, creation date:2024-08-24 17:12:03 +0000>"
    )
    #expect(device.model == "iPhone")
    #expect(device.hardware == "iPhone14,3")
    #expect(device.software == "16.1.2")
  }

  @Test func keepsTextThatIsNotADeviceDump() {
    #expect(DeviceDescription(parsing: "Withings scale").name == "Withings scale")
    #expect(DeviceDescription(parsing: "<<HKDevice: 0x1>, name:Scale>").model == nil)
  }

  @Test func classifiesSources() {
    #expect(SourceClass.classify(deviceModel: "Watch", sourceName: "Phone") == .appleWatch)
    #expect(SourceClass.classify(deviceModel: "iPhone", sourceName: "Alex’s Apple Watch") == .iPhone)
    #expect(SourceClass.classify(deviceModel: "Scale", sourceName: "iPhone") == .other)
    #expect(SourceClass.classify(deviceModel: nil, sourceName: "Alex’s Apple Watch") == .appleWatch)
    #expect(SourceClass.classify(deviceModel: nil, sourceName: "my iphone") == .other)
    #expect(SourceClass.classify(deviceModel: nil, sourceName: "iPhone") == .iPhone)
    #expect(SourceClass.classify(deviceModel: nil, sourceName: "Watc") == .other)
    // The name is matched Character by Character: "h" with a combining acute accent is not "h",
    // though its bytes begin with it.
    #expect(SourceClass.classify(deviceModel: nil, sourceName: "Alex’s Watch\u{301}") == .other)
    #expect(SourceClass.classify(deviceModel: nil, sourceName: "Alex’s Watch\u{301} and iPhone") == .iPhone)
  }

  @Test(arguments: [
    ("HKCategoryValueSleepAnalysisAsleepCore", "SleepAnalysis", "asleepCore"),
    ("HKCategoryValueSleepAnalysisAsleepUnspecified", "SleepAnalysis", "asleepUnspecified"),
    ("HKCategoryValueSleepAnalysisAsleep", "SleepAnalysis", "asleepUnspecified"),
    ("HKCategoryValueSleepAnalysisInBed", "SleepAnalysis", "inBed"),
    ("HKCategoryValueSleepAnalysisAsleepREM", "SleepAnalysis", "asleepREM"),
    ("HKCategoryValueAppleStandHourStood", "AppleStandHour", "stood"),
    ("HKCategoryValueNotApplicable", "MindfulSession", "notApplicable"),
    ("HKCategoryValueSeverityModerate", "Headache", "severityModerate"),
  ])
  func categoryShortNames(raw: String, type: String, expected: String) {
    #expect(CategoryValueName.shortName(raw: raw, typeShortName: type) == expected)
  }

  @Test func missingCategoryValueIsNotApplicable() {
    #expect(CategoryValueName.shortName(raw: nil, typeShortName: "MindfulSession") == "notApplicable")
  }

  @Test func sleepStagesFromOldAndNewNames() {
    #expect(SleepStage(shortName: "asleepUnspecified") == .asleepUnspecified)
    #expect(
      SleepStage(
        shortName: CategoryValueName.shortName(
          raw: "HKCategoryValueSleepAnalysisAsleep", typeShortName: "SleepAnalysis")) == .asleepUnspecified)
    #expect(SleepStage.asleepDeep.isAsleep && !SleepStage.awake.isAsleep && !SleepStage.inBed.isAsleep)
  }

  @Test func typeInfoStripsPrefixes() {
    let steps = SampleTypeInfo(identifier: "HKQuantityTypeIdentifierStepCount")
    #expect(steps.shortName == "StepCount" && steps.kind == .quantity && steps.aggregation == .cumulative)
    let sleep = SampleTypeInfo(identifier: "HKCategoryTypeIdentifierSleepAnalysis")
    #expect(sleep.shortName == "SleepAnalysis" && sleep.kind == .category)
    let goal = SampleTypeInfo(identifier: "HKDataTypeSleepDurationGoal")
    #expect(goal.shortName == "SleepDurationGoal" && goal.kind == .other)
    #expect(SampleTypeInfo(identifier: "HKQuantityTypeIdentifierHeartRate").aggregation == .discreteTemporallyWeighted)
  }
}
