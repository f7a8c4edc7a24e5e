import HealthExtract

/// Every other top-level element (`ActivitySummary`, `ClinicalRecord`, `Audiogram`, `Me`,
/// unknown ones), kept generically: its attributes as written and how many elements it held.
final class OtherElementReader {
  private let stages: [any SampleStage]
  private var element: GenericElement?

  init(stages: [any SampleStage]) { self.stages = stages }

  var isOpen: Bool { element != nil }

  /// An element at `depth` (2 = a child of `HealthData`) that no other family reads.
  func start(_ attributes: ElementAttributes, depth: Int, line: Int) {
    if depth == 2 {
      element = GenericElement(
        name: ElementAttributes.text(attributes.elementName), attributes: attributes.all(), line: line)
    } else {
      element?.childCount += 1
    }
  }

  /// A `MetadataEntry` inside the element counts as one of its children.
  func addChild() { element?.childCount += 1 }

  /// The end of an element no other family reads; at `depth` 1 the element is complete.
  func end(depth: Int) {
    guard depth == 1, let finished = element else { return }
    element = nil
    for stage in stages { stage.consume(finished) }
  }
}
