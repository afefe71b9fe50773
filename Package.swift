// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "threeds-harness",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "threeds-harness", targets: ["HarnessCLI"]),
        .executable(name: "threeds-fuzz", targets: ["Fuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
    ],
    targets: [
        // C edge: system libraries and the one shim OpenSSL's macros need.
        .systemLibrary(name: "CLibUV", pkgConfig: "libuv", providers: [.apt(["libuv1-dev"])]),
        .systemLibrary(name: "CHTTPParser", providers: [.apt(["libhttp-parser-dev"])]),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // PostgreSQL's client library, for the shared store of several instances (its asynchronous API on a libuv poll handle).
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .target(
            name: "COpenSSL",
            linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]
        ),

        // The text encodings of messages: a strict JSON reader and writer that keep member order
        // and report duplicates, and strict base64url.
        .target(name: "JSON"),

        // I/O and crypto.
        .target(name: "JOSE", dependencies: ["COpenSSL", "JSON"]),
        // libuv's event loops, one per thread: timers, handles a Swift object owns, and state confined to a loop.
        .target(name: "EventLoops", dependencies: ["CLibUV"]),
        // One PostgreSQL connection on a loop (libpq's asynchronous API on a poll handle): the only module that links libpq.
        .target(name: "Postgres", dependencies: ["CLibPQ", "CLibUV", "EventLoops"]),

        // The protocol model: messages, field rules, error codes. Pure Swift, no I/O, no OpenSSL.
        .target(name: "EMV3DS", dependencies: ["JSON"]),
        // The EMV-specific uses of JOSE: device data, and the secure channel.
        .target(name: "EMVCrypto", dependencies: ["EMV3DS", "JOSE", "JSON"]),
        // Misbehaving on purpose: every fault a scenario can name, and how each spoils a message,
        // acsSignedContent or a CRes (an answer on the wire: Messaging's FaultyAnswer).
        .target(name: "Faults", dependencies: ["EMV3DS", "EMVCrypto", "JOSE", "JSON"]),
        // Scripted outcomes, and the transaction records the roles keep.
        .target(name: "Scenarios", dependencies: ["EMV3DS", "Faults", "JSON"]),
        // Transaction records: the bounded in-memory cache each role keeps, and the durable
        // archive behind it (SQLite, or PostgreSQL shared by several instances; written off the loops).
        .target(name: "Store", dependencies: ["CSQLite", "EventLoops", "Postgres"]),
        // Each transaction as the roles saw it together: messages (decrypted), checks of the
        // party under test, its run case; what the inspector and the run reports read.
        .target(name: "Journal", dependencies: ["EMV3DS", "JSON", "Store"]),
        // Test runs of a suite against the party under test, graded from the journal, and their
        // reports (JUnit XML, JSON, one-file HTML).
        .target(name: "Runs", dependencies: ["EMV3DS", "JSON", "Faults", "Journal", "Messaging", "Scenarios", "Store"]),
        .target(
            name: "Net",
            dependencies: [
                "CLibUV", "CHTTPParser", "COpenSSL", "EventLoops", "JSON",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // EMV messages over HTTP: reading requests, answering Erro, exchanging with peers, answers spoilt by faults, and
        // where a request names its transaction.
        .target(name: "Messaging", dependencies: ["Net", "EMV3DS", "Faults", "JOSE", "JSON"]),

        // The three roles, one module each.
        .target(name: "DirectoryServer", dependencies: [
            "EMV3DS", "EMVCrypto", "Faults", "JOSE", "JSON", "Journal", "Messaging", "Net", "Scenarios", "Store", .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "AccessControlServer", dependencies: [
            "EMV3DS", "EMVCrypto", "EventLoops", "Faults", "JOSE", "JSON", "Journal", "Messaging", "Net", "Scenarios", "Store", .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "ThreeDSServer", dependencies: [
            "EMV3DS", "EMVCrypto", "EventLoops", "JOSE", "JSON", "Messaging", "Net", "Store", .product(name: "Logging", package: "swift-log"),
        ]),

        // Several instances on one store as one harness: requests passed on to their transaction's home, changes
        // spread, runs across instances, the background work of a live instance.
        .target(name: "Cluster", dependencies: [
            "EMV3DS", "EventLoops", "JOSE", "JSON", "Journal", "Messaging", "Net", "Runs", "Scenarios", "Store", .product(name: "Logging", package: "swift-log"),
        ]),

        // The SDK side of the protocol, for tests and `simulate`.
        .target(name: "SDKSimulator", dependencies: ["EMV3DS", "EMVCrypto", "JOSE", "JSON", "Messaging", "Net"]),

        // The configuration and scenario files, read and checked: what the app is built from, and what the fuzz targets read.
        .target(
            name: "Configuration",
            dependencies: [
                "AccessControlServer", "EMV3DS", "Faults", "JOSE", "JSON", "Net", "Scenarios", "Store", "ThreeDSServer",
                .product(name: "Logging", package: "swift-log"), .product(name: "Yams", package: "Yams"),
            ]
        ),

        // Composition: logging, metrics, the routes of every role on one server.
        .target(
            name: "Harness",
            dependencies: [
                "Net", "EventLoops", "JOSE", "JSON", "EMV3DS", "EMVCrypto", "Faults", "Scenarios", "Messaging",
                "DirectoryServer", "AccessControlServer", "ThreeDSServer", "Cluster", "Configuration", "Store", "Journal", "Runs",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),

        // The command line: wiring only.
        // The measures `bench/run` takes: rates of the parts of a transaction, and a challenge load against a served harness.
        .target(name: "Bench", dependencies: ["EMV3DS", "EMVCrypto", "EventLoops", "JOSE", "JSON", "Net", "SDKSimulator"]),
        .executableTarget(
            name: "HarnessCLI",
            dependencies: [
                "Harness", "Bench", "Configuration", "Net", "EventLoops", "JOSE", "JSON", "EMV3DS", "EMVCrypto", "Runs", "Scenarios", "SDKSimulator", "ThreeDSServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Fuzz targets for every parser of outside bytes; `./harness fuzz` runs them under libFuzzer.
        .target(name: "FuzzTargets", dependencies: ["Configuration", "EMV3DS", "EMVCrypto", "JOSE", "JSON", "Net"]),
        .executableTarget(name: "Fuzz", dependencies: ["FuzzTargets"]),

        // Shared by the test targets: the repository's root and child processes.
        .target(name: "TestSupport", dependencies: ["JOSE"], path: "Tests/TestSupport"),
        .testTarget(name: "NetTests", dependencies: ["Net", "EventLoops", "TestSupport"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "AccessControlServerTests", dependencies: ["AccessControlServer", "EMV3DS", "Messaging", "Net", "Scenarios"]),
        .testTarget(name: "DirectoryServerTests", dependencies: ["DirectoryServer", "EMV3DS", "Faults"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres"]),
        // The cluster's parts that need no second instance (ClusterTests in FlowTests run several).
        .testTarget(name: "ClusterUnitTests", dependencies: ["Cluster", "EventLoops", "Messaging", "Net", "Store", .product(name: "Logging", package: "swift-log")]),
        // ThirdParty: published messages nobody here wrote, read from the source tree.
        .testTarget(name: "EMV3DSTests", dependencies: ["EMV3DS", "JSON"], exclude: ["ThirdParty"]),
        .testTarget(name: "EMVCryptoTests", dependencies: ["EMVCrypto", "EMV3DS", "JOSE", "JSON"]),
        // Fixtures and the Python interop peer are read from the source tree at test time.
        .testTarget(name: "JOSETests", dependencies: ["JOSE", "JSON", "TestSupport"], exclude: ["Fixtures", "Interop"]),
        .testTarget(name: "HarnessTests", dependencies: ["Configuration", "EMV3DS", "EventLoops", "Faults", "JOSE", "JSON", "FuzzTargets", "Harness", "Journal", "Messaging", "Net", "Postgres", "Runs", "Scenarios", "Store", "TestSupport",
                                                           .product(name: "Logging", package: "swift-log"), .product(name: "Yams", package: "Yams")]),
        // End to end: the roles over real HTTP on loopback, driven by the SDK simulator, by a Python peer, and by
        // headless Chromium under Selenium (Browser/, a Python script).
        .testTarget(name: "FlowTests", dependencies: ["Configuration", "Harness", "Net", "EMV3DS", "EMVCrypto", "EventLoops", "Faults", "JOSE", "JSON", "Journal", "Messaging", "SDKSimulator", "Scenarios", "Store", "TestSupport",
                                                        "ThreeDSServer", .product(name: "Logging", package: "swift-log")],
                    exclude: ["Peer", "Browser"]),
    ]
)

// Imports are internal unless a module's public API needs another's types (`public import`),
// and a member is visible only where its module is imported: the graph above is the real one.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("MemberImportVisibility"),
        // Release builds: generic code specialised across modules, and no dynamic exclusivity
        // checks (6 % of a GET /health); debug builds, which the tests run, keep the checks.
        .unsafeFlags(["-cross-module-optimization", "-enforce-exclusivity=unchecked"], .when(configuration: .release)),
    ]
}
