import HealthExtract

/// Every other top-level element (`ActivitySummary`, `ClinicalRecord`, `Audiogram`, `Me`,
/// unknown ones), kept generically: its attributes as written and how many elements it held.
final class OtherElementReader {
  private let stages: [any SampleStage]
  private var element: GenericElement?

  init(stages: [any SampleStage]) { self.stages = stages }

  var isOpen: Bool { element != nil }

  /// What became of an element handed to `start`.
  enum Taken {
    /// A top-level element: kept with every attribute.
    case whole
    /// Inside a kept element: counted as one of its children, its attributes left.
    case counted
    /// Anywhere else (inside a record or a workout, say): no reader takes it.
    case dropped
  }

  /// An element at `depth` (2 = a child of `HealthData`) that no other family reads.
  func start(_ attributes: ElementAttributes, depth: Int, line: Int) -> Taken {
    if depth == 2 {
      element = GenericElement(
        name: ElementAttributes.text(attributes.elementName), attributes: attributes.all(), line: line)
      return .whole
    }
    guard element != nil else { return .dropped }
    element!.childCount += 1
    return .counted
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
