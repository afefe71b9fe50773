// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "threeds-harness",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "threeds-harness", targets: ["HarnessCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
    ],
    targets: [
        // C edge: system libraries and the one shim OpenSSL's macros need.
        .systemLibrary(name: "CLibUV", pkgConfig: "libuv", providers: [.apt(["libuv1-dev"])]),
        .systemLibrary(name: "CHTTPParser", providers: [.apt(["libhttp-parser-dev"])]),
        .target(
            name: "COpenSSL",
            linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]
        ),

        // I/O and crypto.
        .target(name: "JOSE", dependencies: ["COpenSSL"]),

        // The protocol model: messages, field rules, error codes. Pure Swift, no I/O.
        .target(name: "EMV3DS"),
        .target(
            name: "Net",
            dependencies: [
                "CLibUV", "CHTTPParser", "COpenSSL",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Composition: configuration file, logging, the routes of every role on one server.
        .target(
            name: "Harness",
            dependencies: [
                "Net", "JOSE",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),

        // The command line: wiring only.
        .executableTarget(
            name: "HarnessCLI",
            dependencies: [
                "Harness", "Net", "JOSE",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        .testTarget(name: "NetTests", dependencies: ["Net"]),
        .testTarget(name: "EMV3DSTests", dependencies: ["EMV3DS"]),
        // Fixtures and the Python interop peer are read from the source tree at test time.
        .testTarget(name: "JOSETests", dependencies: ["JOSE"], exclude: ["Fixtures", "Interop"]),
        .testTarget(name: "HarnessTests", dependencies: ["Harness", "Net"]),
    ]
)
