import Foundation
import HealthModel

/// `run.json`'s `worthALook`: what the marts flagged (Pipelines/docs/nightly.md, "Worth a look"), per
/// rule its title, how many items, and the first `Oddities.itemsKept` of them.
enum WorthALook {
  static func jsonObject(_ oddities: Oddities) -> [String: Any] {
    var object: [String: Any] = [:]
    for found in oddities.found {
      object[found.rule.key] = [
        "title": found.rule.title, "why": found.rule.why, "count": found.count,
        "omitted": found.count - found.items.count,
        "items": found.items.map { item -> [String: Any] in
          var entry: [String: Any] = ["detail": item.detail]
          entry["date"] = item.date.map { $0.description } ?? NSNull()
          if let id = item.id { entry["id"] = id }
          return entry
        },
      ]
    }
    return object
  }

  /// `worth a look: 2 nights asleep more than 16 hours, 1 run faster than …; see report.html …`,
  /// or nil when nothing was flagged.
  static func summaryLine(_ oddities: Oddities) -> String? {
    guard !oddities.isEmpty else { return nil }
    let items = oddities.found.map {
      "\($0.count) × \($0.rule.title.prefix(1).lowercased() + $0.rule.title.dropFirst())"
    }
    return "worth a look: " + items.joined(separator: "; ") + " (values kept as written; run.json: worthALook)"
  }
}
