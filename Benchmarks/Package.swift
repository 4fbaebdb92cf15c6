// swift-tools-version: 6.1
import PackageDescription

// Runway's benchmarks, in a package of their own so that an app depending on Runway never
// resolves the benchmark tooling. Run them from this folder:
//
//     swift package benchmark
//
// (release builds; the README's Performance section has the ratios, README.md here the method and history).
let package = Package(
    name: "RunwayBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Runway", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.3.0"),
    ],
    targets: [
        .executableTarget(
            name: "RunwayBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Runway", package: "Runway"),
                .product(name: "RunwayNIO", package: "Runway"),
                .product(name: "RunwayStorage", package: "Runway"),
                // The test certificate authority of the TLS lines.
                .product(name: "RunwayDemoServer", package: "Runway"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                // The tracer of the tracing line: spans really made, kept in memory.
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            path: "Benchmarks/RunwayBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
