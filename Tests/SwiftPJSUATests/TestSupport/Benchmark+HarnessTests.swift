import Foundation
import PJSUATestSupport
import Testing

/// `make bench`'s harness, a few seconds of load per side, so it cannot rot unnoticed.
/// It launches processes only (sipp, `swiftpjsua listen`, the C `pjsua` app) on ports the
/// kernel picks, so it needs no place in the serialized engine suite.
@Suite("Benchmark harness")
struct BenchmarkSmokeTests {
    /// The C pjsua app built from the same pjproject as the tool (the harness's own rule:
    /// the app installed beside the libpj the tool loads, loading that same libpj), or why
    /// there is none. Without one the test is skipped, and the skip says why.
    static let matchingApp: (path: String?, why: String) = {
        let harness = Repository.root.appendingPathComponent("Benchmarks/bench.py").path
        guard
            let (status, line) = commandOutput(
                "/usr/bin/python3", [harness, "--check-apps", "--swiftpjsua", Repository.tool.path],
                withStandardError: true)
        else { return (nil, "cannot run the harness") }
        return status == 0 ? (line, "") : (nil, line)
    }()

    @Test(
        "Smoke run: swiftpjsua listen and the C pjsua app both complete calls with and without media",
        .enabled(if: matchingApp.path != nil, "no C pjsua app of the same pjproject: \(matchingApp.why)"))
    func smokeRun() async throws {
        try await withTemporaryFolder("swiftpjsua-bench") { folder in
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
}
