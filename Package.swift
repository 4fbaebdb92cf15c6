// swift-tools-version: 6.1
import PackageDescription

/// Settings every Runway target shares: Swift 6 language mode (set by the tools version) plus
/// `ExistentialAny`, so that every existential is spelled `any` and costs are visible.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

/// What the test targets of the network layer, the server half and the command line link: the
/// products under test and the support library, and the libraries the tests drive them with.
let testDependencies: [Target.Dependency] = [
    "Runway",
    "RunwayExamples",
    "RunwayNIO",
    "RunwayServer",
    "RunwayDemoServer",
    "RunwayTestSupport",
    .product(name: "Hummingbird", package: "hummingbird"),
    .product(name: "AsyncHTTPClient", package: "async-http-client"),
    .product(name: "NIOCore", package: "swift-nio"),
    .product(name: "NIOPosix", package: "swift-nio"),
    .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
    .product(name: "NIOHTTP2", package: "swift-nio-http2"),
    .product(name: "NIOSSL", package: "swift-nio-ssl"),
    .product(name: "GRDB", package: "GRDB.swift"),
    .product(name: "PostgresNIO", package: "postgres-nio"),
    .product(name: "Crypto", package: "swift-crypto"),
    .product(name: "HTTPTypes", package: "swift-http-types"),
    .product(name: "Logging", package: "swift-log"),
    .product(name: "MetricsTestKit", package: "swift-metrics"),
    .product(name: "CompressNIO", package: "compress-nio"),
    .product(name: "Tracing", package: "swift-distributed-tracing"),
    .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
    .product(name: "OTel", package: "swift-otel"),
    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
    .product(name: "PropertyBased", package: "swift-property-based"),
]

let package = Package(
    name: "Runway",
    defaultLocalization: "en",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    products: [
        .library(name: "Runway", targets: ["Runway"]),
        .library(name: "RunwayNIO", targets: ["RunwayNIO"]),
        .library(name: "RunwayServer", targets: ["RunwayServer"]),
        .library(name: "RunwayDemoServer", targets: ["RunwayDemoServer"]),
        .library(name: "RunwayStorage", targets: ["RunwayStorage"]),
        .library(name: "RunwayLinks", targets: ["RunwayLinks"]),
        .executable(name: "runway", targets: ["RunwayCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // OTLP over HTTP only: `runway serve` exports its spans to a collector; no gRPC stack.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        // Property tests (random sequences of loads and sign-ins), in the tests only.
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        // `swift package generate-documentation` (a command plugin: nothing of it is linked).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
    ],
    targets: [
        // The core: API managers, engine, services, reformers, errors, URLSession transport.
        // No SwiftNIO here, so an iOS app links Runway without it.
        .target(
            name: "Runway",
            dependencies: [
                "RunwayStorage",
                "CZlib",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the disk cache's hot read (GRDB hands out its statements for it).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            resources: [.process("Resources")],
            swiftSettings: strictSettings
        ),
        // The system zlib (gzip for operation-log uploads and the collector, content decoding in
        // the engine), without SwiftNIO.
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Container roles, backup exclusion, atomic and versioned files, capacity, inventory.
        // No network code: the lowest layer.
        .target(
            name: "RunwayStorage",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
        // The custom URL scheme router: strict validation, typed routes, outgoing URLs, Linux
        // registration. Independent of the network layer and of every package (so the fuzz
        // script can compile it with swiftc alone).
        .target(
            name: "RunwayLinks",
            swiftSettings: strictSettings
        ),
        // The AsyncHTTPClient transport: HTTP/1.1 and HTTP/2, pooled connections.
        .target(
            name: "RunwayNIO",
            dependencies: [
                "Runway",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSettings
        ),
        // The server half a deployment runs, on Hummingbird: the signature verifier and its nonce
        // stores, the operation-log collector and its stores (SQLite, PostgreSQL), metrics.
        .target(
            name: "RunwayServer",
            dependencies: [
                "Runway",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSettings
        ),
        // The demo and test server (as Hummingbird ships HummingbirdTesting): the demo's listing
        // APIs, routes that misbehave on purpose, a collector that fails on request, and a
        // certificate authority made at run time for TLS and HTTP/2. Never in a deployment.
        .target(
            name: "RunwayDemoServer",
            dependencies: [
                "Runway",
                "RunwayServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strictSettings
        ),
        // The listing APIs and reformers of the demo and the README, shared with the tests.
        .target(
            name: "RunwayExamples",
            dependencies: [
                "Runway",
                "RunwayLinks",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "RunwayCLI",
            dependencies: [
                "Runway",
                "RunwayExamples",
                "RunwayNIO",
                "RunwayServer",
                "RunwayDemoServer",
                "RunwayStorage",
                "RunwayLinks",
                "RunwayTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            exclude: ["README.md"],
            swiftSettings: strictSettings
        ),
        // What the tests and the demo share: an API made on the spot, a wiretap, a recording
        // delegate, the harness of a demo server and an engine, child processes (without
        // Foundation's `Process`), httpbin and PostgreSQL started by the tests, the fixtures.
        .target(
            name: "RunwayTestSupport",
            dependencies: [
                "Runway",
                "RunwayNIO",
                "RunwayServer",
                "RunwayDemoServer",
                "RunwayExamples",
                "RunwayStorage",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/RunwayTestSupport",
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RunwayLinksTests",
            dependencies: ["RunwayLinks", "RunwayExamples", "RunwayTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RunwayStorageTests",
            dependencies: [
                "RunwayStorage",
                "RunwayTestSupport",
                "CZlib",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
        // The core: managers, engine, caches, signing, transports (both), operation logs.
        .testTarget(name: "RunwayTests", dependencies: testDependencies, swiftSettings: strictSettings),
        // The AsyncHTTPClient transport on its own.
        .testTarget(name: "RunwayNIOTests", dependencies: testDependencies, swiftSettings: strictSettings),
        // The verifier, the nonce stores and the collector with its stores.
        .testTarget(name: "RunwayServerTests", dependencies: testDependencies, swiftSettings: strictSettings),
        // `runway` in processes of its own: the demo, serve, oplog, transfers.
        .testTarget(name: "RunwayCLITests", dependencies: testDependencies, swiftSettings: strictSettings),
    ]
)
