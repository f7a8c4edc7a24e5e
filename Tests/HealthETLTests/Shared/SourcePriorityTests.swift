import HealthETL
import Testing

@Suite struct SourcePriorityTests {
  let priority = SourcePriority()

  @Test func defaultOrderIsManualWatchPhoneOther() {
    let manual = priority.rank(sourceName: "Health", deviceModel: nil, userEntered: true)
    let watch = priority.rank(sourceName: "Alex’s Apple Watch", deviceModel: "Watch", userEntered: false)
    let phone = priority.rank(sourceName: "Alex’s iPhone", deviceModel: "iPhone", userEntered: false)
    let other = priority.rank(sourceName: "AutoSleep", deviceModel: nil, userEntered: false)
    #expect(manual < watch && watch < phone && phone < other)
  }

  @Test func theDeviceModelDecidesBeforeTheName() {
    // A source named like a phone whose device says Watch ranks as a Watch.
    let watchModel = priority.rank(sourceName: "iPhone", deviceModel: "Watch", userEntered: false)
    let phone = priority.rank(sourceName: "Alex’s iPhone", deviceModel: nil, userEntered: false)
    #expect(watchModel < phone)
  }

  @Test func withinARankNamesOrderByUTF8Bytes() {
    let a = priority.rank(sourceName: "Zepp", deviceModel: nil, userEntered: false)
    let b = priority.rank(sourceName: "Äpp", deviceModel: nil, userEntered: false)
    let c = priority.rank(sourceName: "AutoSleep", deviceModel: nil, userEntered: false)
    // "A" (0x41) < "Z" (0x5A) < "Ä" (0xC3 0x84)
    #expect(c < a && a < b)
  }

  @Test func overridesComeFirstInListOrderAheadOfManualEntries() {
    let custom = SourcePriority(overrides: ["autosleep", "Apple Watch"])
    let autoSleep = custom.rank(sourceName: "AutoSleep", deviceModel: nil, userEntered: false)
    let watch = custom.rank(sourceName: "Alex’s Apple Watch", deviceModel: "Watch", userEntered: false)
    let manual = custom.rank(sourceName: "Health", deviceModel: nil, userEntered: true)
    #expect(autoSleep < watch && watch < manual)
  }

  @Test func sourcesMatchingTheSameEntryKeepTheDefaultOrder() {
    let custom = SourcePriority(overrides: ["alex"])
    let watch = custom.rank(sourceName: "Alex’s Apple Watch", deviceModel: "Watch", userEntered: false)
    let phone = custom.rank(sourceName: "Alex’s iPhone", deviceModel: "iPhone", userEntered: false)
    #expect(watch < phone)
  }
}
