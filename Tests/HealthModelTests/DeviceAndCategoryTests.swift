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

  /// AirPods write their Bluetooth product id as the model: a known id is named, an unknown one of
  /// the `0x20xx` range is called headphones, the code stays; other models are as written.
  @Test func headphoneProductIDsAreNamedWithTheirCodeKept() {
    #expect(DeviceModelName.shown("0x200e") == "AirPods Pro (0x200e)")
    #expect(DeviceModelName.shown("0x200F") == "AirPods (2nd generation) (0x200F)")
    #expect(DeviceModelName.shown("0x2014") == "AirPods Pro (2nd generation) (0x2014)")
    #expect(DeviceModelName.shown("0x2012") == "AirPods or Beats headphones (0x2012)")
    for model in ["Watch", "iPhone", "A2084", "0x1234", "0x200", "0x200e1", "0x20zz", ""] {
      #expect(DeviceModelName.shown(model) == model)
    }
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

  /// HealthKit's raw values (HKCategoryValues.h): what iOS 8–9 exports wrote instead of names.
  @Test func rawValuesNameTheValueCurrentExportsWrite() {
    func name(_ raw: Int, _ type: String) -> String? { CategoryRawValues.name(raw: raw, typeShortName: type) }
    #expect(name(0, "SleepAnalysis") == "HKCategoryValueSleepAnalysisInBed")
    #expect(name(1, "SleepAnalysis") == "HKCategoryValueSleepAnalysisAsleepUnspecified")
    #expect(name(5, "SleepAnalysis") == "HKCategoryValueSleepAnalysisAsleepREM")
    #expect(name(6, "SleepAnalysis") == nil)
    #expect(name(1, "AppleStandHour") == "HKCategoryValueAppleStandHourIdle")
    #expect(name(0, "MindfulSession") == "HKCategoryValueNotApplicable")
    #expect(name(1, "MindfulSession") == nil)
    #expect(name(0, "CervicalMucusQuality") == nil)
    #expect(name(5, "CervicalMucusQuality") == "HKCategoryValueCervicalMucusQualityEggWhite")
    #expect(name(7, "Contraceptive") == "HKCategoryValueContraceptivePatch")
    #expect(name(1, "Headache") == nil)
    #expect(CategoryRawValues.rawValues(ofTypeShortName: "SleepAnalysis") == 0...5)
    #expect(CategoryRawValues.rawValues(ofTypeShortName: "MenstrualFlow") == 1...5)
    #expect(CategoryRawValues.rawValues(ofTypeShortName: "Headache") == nil)
    // Every name reads back as the short name the export's own text would give.
    #expect(
      CategoryValueName.shortName(raw: name(1, "SleepAnalysis"), typeShortName: "SleepAnalysis")
        == "asleepUnspecified")
  }

  /// A record without a value stands for raw value 0: NotApplicable, in bed, stood.
  @Test func anAbsentValueIsRawValueZero() {
    #expect(CategoryRawValues.nameWhenAbsent(typeShortName: "SleepAnalysis") == "HKCategoryValueSleepAnalysisInBed")
    #expect(CategoryRawValues.nameWhenAbsent(typeShortName: "AppleStandHour") == "HKCategoryValueAppleStandHourStood")
    #expect(CategoryRawValues.nameWhenAbsent(typeShortName: "HandwashingEvent") == "HKCategoryValueNotApplicable")
    #expect(CategoryRawValues.nameWhenAbsent(typeShortName: "MenstrualFlow") == nil)
    #expect(CategoryRawValues.nameWhenAbsent(typeShortName: "Unknown") == nil)
  }

  @Test(arguments: [
    ("Deep", "AsleepDeep"), ("Light", "AsleepCore"), ("REM", "AsleepREM"), ("Awake", "Awake"),
    (" light ", "AsleepCore"), ("DEEP", "AsleepDeep"), ("Restless", "AsleepUnspecified"), ("", "AsleepUnspecified"),
  ])
  func withingsStages(stage: String, expected: String) {
    #expect(CategoryRawValues.sleepValueName(ofWithingsStage: stage) == "HKCategoryValueSleepAnalysis" + expected)
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
