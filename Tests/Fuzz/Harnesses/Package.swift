// swift-tools-version: 6.0
import PackageDescription

// libFuzzer harnesses, one executable per reader of untrusted input. Built only by `make fuzz`
// and `make fuzz-smoke` (with `-sanitize=fuzzer,address`), never by the main package: a plain
// `swift build` there does not see this folder.
let readers = Target.Dependency.product(name: "HealthETLReaders", package: "HealthETL")

let package = Package(
  name: "HealthETLFuzz",
  // Named, because a path dependency's identity is its folder's name, which differs per clone.
  dependencies: [.package(name: "HealthETL", path: "../../..")],
  targets: [
    .target(name: "CLibFuzzer"),
    .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"]),
    .executableTarget(name: "FuzzXML", dependencies: ["FuzzSupport", readers]),
    .executableTarget(name: "FuzzRun", dependencies: ["FuzzSupport", readers]),
    .executableTarget(name: "FuzzZip", dependencies: ["FuzzSupport", readers]),
    .executableTarget(name: "FuzzPipeline", dependencies: ["FuzzSupport", readers]),
    .executableTarget(name: "FuzzCodes", dependencies: ["FuzzSupport", readers]),
    .executableTarget(name: "FuzzState", dependencies: ["FuzzSupport", readers]),
    .executableTarget(name: "FuzzGPX", dependencies: ["FuzzSupport", readers]),
    .executableTarget(name: "FuzzAnswer", dependencies: ["FuzzSupport", readers]),
    .executableTarget(name: "FuzzECG", dependencies: ["FuzzSupport", readers]),
    .executableTarget(name: "FuzzLineProtocol", dependencies: ["FuzzSupport", readers]),
    .executableTarget(name: "FuzzFHIR", dependencies: ["FuzzSupport", readers]),
  ]
)
