public import HealthModel

/// What a mart found worth a look (Pipelines/docs/nightly.md, "Worth a look"): values that stay as
/// written in the tables but that no person measured that way — a 25-hour night, a run at 60 km/h,
/// a day of distance without steps. Per rule, how many items and the first `itemsKept` of them, so
/// an odd export cannot make `run.json` or the report as long as itself.
public struct Oddities: Sendable {
  /// What is flagged, in words: its `run.json` key, a title and why it is worth a look.
  public struct Rule: Sendable, Hashable {
    /// The key under `run.json`'s `worthALook` (`longNights`).
    public let key: String
    /// A title, plural (`Nights asleep more than 16 hours`).
    public let title: String
    /// What the item means and what HealthETL did with it, for the report.
    public let why: String

    public init(key: String, title: String, why: String) {
      self.key = key
      self.title = title
      self.why = why
    }
  }

  /// One flagged item.
  public struct Item: Sendable, Equatable {
    /// The local date it is about (a night's date, a day, a workout's start date).
    public var date: CivilDate?
    /// The workout id, for a workout.
    public var id: String?
    /// What was found, in words (`asleep 25 h 10 min, in bed 26 h 02 min; from Sleep Cycle`).
    public var detail: String

    public init(date: CivilDate?, id: String? = nil, detail: String) {
      self.date = date
      self.id = id
      self.detail = detail
    }
  }

  /// Items kept per rule; the rest are only counted.
  public static let itemsKept = 20

  public struct Found: Sendable {
    public let rule: Rule
    public fileprivate(set) var count: Int
    public fileprivate(set) var items: [Item]
  }

  /// Per rule flagged, in the order first flagged.
  public private(set) var found: [Found] = []

  public init() {}

  public var isEmpty: Bool { found.isEmpty }

  /// Flags one item under `rule`; `item` is only built while fewer than `itemsKept` are kept.
  public mutating func flag(_ rule: Rule, _ item: @autoclosure () -> Item) {
    guard let index = found.firstIndex(where: { $0.rule == rule }) else {
      found.append(Found(rule: rule, count: 1, items: [item()]))
      return
    }
    found[index].count += 1
    if found[index].items.count < Self.itemsKept { found[index].items.append(item()) }
  }

  /// How many items `rule` flagged.
  public func count(_ rule: Rule) -> Int { found.first { $0.rule == rule }?.count ?? 0 }

  /// Every rule of `other` that this one has not flagged (a second mart of the same subject finds
  /// the same items: the first one's stand).
  public mutating func add(_ other: Oddities) {
    for entry in other.found where !found.contains(where: { $0.rule.key == entry.rule.key }) { found.append(entry) }
  }
}
