import Foundation
import PJSUATestSupport
import Testing

/// The fixtures every engine test leans on, checked without an engine: a folder goes also
/// when its body throws and stops the processes launched into it; a wait returns as soon as
/// its condition holds and throws at its deadline.
@Suite("Test fixtures")
struct FixtureTests {
    struct Planned: Error {}

    @Test("withTemporaryFolder removes the folder when the body returns and when it throws")
    func folderRemovedEitherWay() async throws {
        let kept = try await withTemporaryFolder { folder in
            try folder.toneFile()
            return folder.url
        }
        #expect(!FileManager.default.fileExists(atPath: kept.path))
        var thrownIn: URL?
        await #expect(throws: Planned.self) {
            try await withTemporaryFolder { folder in
                thrownIn = folder.url
                throw Planned()
            }
        }
        let url = try #require(thrownIn)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    @Test("A process launched into a folder is stopped when the folder is removed")
    func folderStopsItsProcesses() async throws {
        let folder = try TemporaryFolder()
        let sleeper = try PeerProcess("sleeper", executable: "/usr/bin/sleep", arguments: ["60"], folder: folder)
        #expect(sleeper.exitStatus == nil)
        folder.remove()
        let status = try await sleeper.waitForExit(timeout: .seconds(5))
        #expect(status != 0, "stopped, not run to its end")
        #expect(!FileManager.default.fileExists(atPath: folder.url.path))
    }

    @Test("waitUntil returns once its condition holds and throws TimedOut at its deadline")
    func waitUntilDeadline() async throws {
        var checks = 0
        try await waitUntil("the third check") {
            checks += 1
            return checks == 3
        }
        #expect(checks == 3)
        let began = ContinuousClock.now
        await #expect(throws: TimedOut.self) {
            try await waitUntil("a condition that never holds", timeout: .milliseconds(200)) { false }
        }
        // Not before the deadline (how long after it depends on the machine's load).
        let waited = ContinuousClock.now - began
        #expect(waited >= .milliseconds(200), "\(waited)")
    }
}
