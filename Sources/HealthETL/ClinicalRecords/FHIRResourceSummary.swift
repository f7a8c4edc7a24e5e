/// What a clinical-records row takes from a FHIR resource (DSTU2 or R4): its `resourceType`, the
/// first coding of its main concept, and its clinical date. Everything else in the resource is
/// left alone.
public struct FHIRResourceSummary: Equatable, Sendable {
  public internal(set) var resourceType: String?
  public internal(set) var codeSystem: String?
  public internal(set) var code: String?
  public internal(set) var display: String?
  public internal(set) var effective: String?
  /// Control characters (C0 but tab, line feed and carriage return, and DEL) in those values,
  /// each made a space as in export text: a NUL would cut a value short for a C client of
  /// health.sqlite.
  public internal(set) var replacedControlCharacters = 0

  /// The concept a resource is about, by resource type: `code` (Observation, Condition,
  /// Procedure, DiagnosticReport, AllergyIntolerance in R4), `vaccineCode` (Immunization),
  /// `medicationCodeableConcept` (MedicationStatement, MedicationOrder), `substance`
  /// (AllergyIntolerance in DSTU2). The first present wins.
  static let conceptKeys = ["code", "vaccineCode", "medicationCodeableConcept", "substance"]

  /// The clinical date, first present wins: when it was measured or done, else when it was
  /// recorded. `…Period` values give their `start`.
  static let dateKeys = [
    "effectiveDateTime", "effectivePeriod", "performedDateTime", "performedPeriod", "occurrenceDateTime", "date",
    "onsetDateTime", "onset", "issued", "recordedDate", "dateRecorded", "dateAsserted", "authoredOn", "dateWritten",
  ]

  /// The summary of a resource document (a JSON object).
  ///
  /// - Throws: `FHIRResourceProblem` when the document is not JSON or not an object.
  public static func summarize(_ bytes: [UInt8]) throws(FHIRResourceProblem) -> FHIRResourceSummary {
    let document: JSONValue
    do { document = try StrictJSON.parse(bytes) } catch {
      throw FHIRResourceProblem(description: "not JSON: \(error)")
    }
    guard case .object(let members) = document.kind else {
      throw FHIRResourceProblem(description: "not a FHIR resource: the document is \(document.typeDescription)")
    }
    var summary = FHIRResourceSummary()
    summary.resourceType = string(member("resourceType", of: members))
    if let concept = conceptKeys.lazy.compactMap({ member($0, of: members) }).first,
      case .object(let fields) = concept.kind
    {
      if case .array(let codings)? = member("coding", of: fields)?.kind, let first = codings.first,
        case .object(let coding) = first.kind
      {
        summary.codeSystem = string(member("system", of: coding))
        summary.code = string(member("code", of: coding))
        summary.display = string(member("display", of: coding))
      }
      if summary.display == nil { summary.display = string(member("text", of: fields)) }
    }
    for key in dateKeys {
      guard let value = member(key, of: members) else { continue }
      if case .object(let period) = value.kind {
        if let start = string(member("start", of: period)) {
          summary.effective = start
          break
        }
      } else if let text = string(value) {
        summary.effective = text
        break
      }
    }
    for field in [\FHIRResourceSummary.resourceType, \.codeSystem, \.code, \.display, \.effective] {
      guard let text = summary[keyPath: field] else { continue }
      var replaced = 0
      let scalars = text.unicodeScalars.map { scalar -> Unicode.Scalar in
        guard (scalar.value < 0x20 && ![0x09, 0x0A, 0x0D].contains(scalar.value)) || scalar.value == 0x7F else {
          return scalar
        }
        replaced += 1
        return " "
      }
      guard replaced > 0 else { continue }
      summary[keyPath: field] = String(String.UnicodeScalarView(scalars))
      summary.replacedControlCharacters += replaced
    }
    return summary
  }

  private static func member(_ key: String, of members: [JSONMember]) -> JSONValue? {
    members.first { $0.key == key }?.value
  }

  private static func string(_ value: JSONValue?) -> String? {
    guard case .string(let text)? = value?.kind, !text.isEmpty else { return nil }
    return text
  }
}

/// Why a resource file gave no summary.
public struct FHIRResourceProblem: Error, CustomStringConvertible, Sendable {
  public var description: String
}
