import Testing

@testable import HealthETL

@Suite struct SourceGroupsTests {
  /// Sources interned in another order than the samples name them, so group numbers differ from
  /// source ids and the slot table grows from a high id down.
  let catalog = SampleCatalog()
  let phone: Int32
  let band: Int32
  let health: Int32
  let zepp: Int32
  /// Three devices of the band: without a model, a Watch, an iPhone.
  let noModel: Int32
  let watchModel: Int32
  let phoneModel: Int32

  init() {
    func intern(_ text: String, _ into: (UnsafeRawBufferPointer) -> Int32) -> Int32 {
      Array(text.utf8).withUnsafeBytes(into)
    }
    phone = intern("Alex’s iPhone", catalog.sources.intern)
    band = intern("Band", catalog.sources.intern)
    health = intern("Health", catalog.sources.intern)
    zepp = intern("Zepp", catalog.sources.intern)
    noModel = intern("<<HKDevice: 0x1>, name:Band>", catalog.internDevice)
    watchModel = intern("<<HKDevice: 0x2>, name:Band, model:Watch>", catalog.internDevice)
    phoneModel = intern("<<HKDevice: 0x3>, name:Band, model:iPhone>", catalog.internDevice)
  }

  func sample(_ source: Int32, userEntered: Bool = false, device: Int32 = -1) -> Sample {
    var sample = Sample()
    sample.source = source
    sample.userEntered = userEntered
    sample.device = device
    return sample
  }

  /// Zepp, Health by hand, Band without a model, Zepp by hand, Band as a Watch, Band as an
  /// iPhone, Zepp, Alex’s iPhone.
  func seen() -> (SourceGroups, [Int32]) {
    var groups = SourceGroups()
    let samples = [
      sample(zepp), sample(health, userEntered: true), sample(band, device: noModel),
      sample(zepp, userEntered: true), sample(band, device: watchModel), sample(band, device: phoneModel),
      sample(zepp), sample(phone),
    ]
    let numbers = samples.map { groups.group(of: $0, catalog: catalog) }
    return (groups, numbers)
  }

  @Test func groupsAreNumberedAsFirstSeenPerSourceAndHandEntry() {
    let (groups, numbers) = seen()
    // Zepp and Zepp by hand are two groups; Band's three devices are one.
    #expect(numbers == [0, 1, 2, 3, 2, 2, 0, 4])
    #expect(groups.count == 5)
    #expect(groups.sourceNames(catalog) == ["Zepp", "Health", "Band", "Zepp", "Alex’s iPhone"])
  }

  @Test func theDefaultOrderTakesTheDeviceOfTheFirstSampleWithAModel() {
    let (groups, _) = seen()
    // By hand first, by name: Health (group 1) 0, Zepp (3) 1. Then Watch: Band (2), whose first
    // device has no model and whose second says Watch, 2 — had the model-less device or the
    // later iPhone one counted, Band would rank after Alex’s iPhone. Then iPhone by name:
    // Alex’s iPhone (4) 3. Last every other source: Zepp (0) 4.
    #expect(groups.rankPositions(SourcePriority(), catalog: catalog) == [4, 0, 2, 1, 3])
  }

  @Test func overridesRankTheirSourcesFirstKeepingTheDefaultOrderAmongThem() {
    let (groups, _) = seen()
    // "zepp" matches both Zepp groups: by hand (3) 0, then the other (0) 1; then the default
    // order: Health by hand (1) 2, Band as a Watch (2) 3, Alex’s iPhone (4) 4.
    #expect(groups.rankPositions(SourcePriority(overrides: ["zepp"]), catalog: catalog) == [1, 2, 3, 0, 4])
  }

  @Test func noGroupsRankToNoPositions() {
    let groups = SourceGroups()
    #expect(groups.count == 0)
    #expect(groups.rankPositions(SourcePriority(), catalog: catalog).isEmpty)
    #expect(groups.sourceNames(catalog).isEmpty)
  }
}
