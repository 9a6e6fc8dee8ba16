import Foundation
import PJSUATestSupport
import Testing

/// `make bench`'s harness, a few seconds of load per side, so it cannot rot unnoticed.
/// It launches processes only (sipp, `swiftpjsua listen`, the C `pjsua` app) on ports the
/// kernel picks, so it needs no place in the serialized engine suite.
@Suite("Benchmark harness")
struct BenchmarkSmokeTests {
    @Test("Smoke run: swiftpjsua listen and the C pjsua app both complete calls with and without media")
    func smokeRun() async throws {
        let folder = try TemporaryFolder("swiftpjsua-bench")
        defer { folder.remove() }
        let harness = Repository.root.appendingPathComponent("Benchmarks/bench.py").path
        let process = try PeerProcess(
            "bench-smoke", executable: "/usr/bin/python3",
            arguments: [harness, "--smoke", "--swiftpjsua", Repository.tool.path, "--out", folder.url.path],
            folder: folder, lifetimeSeconds: 120)
        let status = try await process.waitForExit(timeout: .seconds(100))
        #expect(status == 0, "\(process.output.suffix(4000))")
        let results = try String(contentsOf: folder.file("results.csv"), encoding: .utf8)
        #expect(results.contains("Sustained rate"), "\(results)")
    }
}
