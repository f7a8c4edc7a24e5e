// swift-tools-version: 6.0
import PackageDescription

let strictSettings: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("MemberImportVisibility"),
  .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The per-record path mutates state of a few long-lived classes millions of times; the static
/// exclusivity checks still apply, but the dynamic ones cost ~10 % of a parse (see `make bench`).
let hotPathSettings: [SwiftSetting] =
  strictSettings + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
  name: "HealthETL",
  products: [
    .executable(name: "healthetl", targets: ["healthetl"]),
    .executable(name: "xmlfloor", targets: ["xmlfloor"]),
    // For the libFuzzer harnesses in Tests/Fuzz, a separate package that depends on this one by
    // path and can only reach products.
    .library(name: "HealthETLReaders", targets: ["HealthETL", "HealthExtract", "RunExecution"]),
  ],
  targets: [
    // C libraries from Debian, each behind a one-header module map.
    .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
    .systemLibrary(name: "CArchive", pkgConfig: "libarchive", providers: [.apt(["libarchive-dev"])]),
    .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
    .systemLibrary(name: "CXLSXWriter", pkgConfig: "xlsxwriter", providers: [.apt(["libxlsxwriter-dev"])]),
    // libcurl (OpenSSL), the HTTP client that delivers workout records to a server.
    .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
    // libsqlite3, the engine of health.sqlite.
    .systemLibrary(name: "CSQLite3", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
    // renameat2(RENAME_EXCHANGE), for swapping a finished output folder into place atomically.
    .target(name: "CFileSystem"),

    // The one owner of a run's threads (dedicated threads and a bounded pool), made by the command
    // and passed to every part of a run that starts one.
    .target(name: "RunExecution", swiftSettings: strictSettings),
    // Vocabulary: instants, zones, units, sample types. Pure Swift except the digest wrapper.
    .target(name: "HealthModel", dependencies: ["CCrypto"], swiftSettings: hotPathSettings),
    // Extract: bytes of any export form -> libxml2 SAX2 element events. Knows nothing of the model.
    .target(
      name: "HealthExtract", dependencies: ["CLibXML2", "CArchive", "RunExecution"], swiftSettings: hotPathSettings),
    // Transform + load: staging, stages, sinks, pipelines, run report.
    .target(
      name: "HealthETL",
      dependencies: [
        "HealthModel", "HealthExtract", "RunExecution", "CFileSystem", "CXLSXWriter", "CCurl", "CSQLite3",
      ],
      swiftSettings: hotPathSettings),
    // The synthetic export generator behind `healthetl sample`.
    .target(name: "SyntheticExport", dependencies: ["HealthModel", "CArchive"], swiftSettings: strictSettings),
    // Commands, option parsing, exit codes; a library so it can be tested.
    .target(
      name: "HealthETLCLI",
      dependencies: ["HealthETL", "HealthExtract", "HealthModel", "RunExecution", "SyntheticExport"],
      swiftSettings: strictSettings),
    .executableTarget(name: "healthetl", dependencies: ["HealthETLCLI"], swiftSettings: strictSettings),
    // The benchmark floor: a libxml2 SAX2 parse that does nothing per element.
    .executableTarget(name: "xmlfloor", dependencies: ["CLibXML2"]),

    .testTarget(name: "HealthModelTests", dependencies: ["HealthModel"], swiftSettings: strictSettings),
    .testTarget(
      name: "SyntheticExportTests", dependencies: ["SyntheticExport", "HealthExtract"], swiftSettings: strictSettings),
    .testTarget(
      name: "HealthExtractTests", dependencies: ["HealthExtract", "RunExecution", "SyntheticExport"],
      swiftSettings: strictSettings),
    .testTarget(
      name: "HealthETLTests",
      // CArchive reads written workbooks back as zips, independently of libxlsxwriter.
      dependencies: ["HealthETL", "HealthExtract", "HealthModel", "RunExecution", "SyntheticExport", "CArchive"],
      swiftSettings: strictSettings),
    .testTarget(
      name: "HealthETLCLITests", dependencies: ["HealthETLCLI", "HealthExtract", "RunExecution"], exclude: ["Fixtures"],
      swiftSettings: strictSettings),
  ]
)
