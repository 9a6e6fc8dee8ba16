import SwiftPJSUA

/// `listen --echo`: each frame a call receives goes straight back into it.
enum Echo {
    /// 16 kHz, 10 ms frames keep the loop's own delay to about two frames.
    static let format = AudioFrameFormat(sampleRate: 16000, frameDuration: .milliseconds(10))

    /// Frames echoed, dropped (the loop fell behind) and underflows (silence sent for want
    /// of a frame) over every call, for `--stats-file`.
    final class Totals: Sendable {
        private let counts = Protected<(calls: Int, frames: Int, dropped: Int, underflows: Int, running: Int)>(
            (0, 0, 0, 0, 0))

        func started() { counts.withLock { $0.running += 1 } }

        /// Returns once every loop has added its totals, or after `limit`.
        func waitForLoops(upTo limit: Duration) async {
            let deadline = ContinuousClock.now + limit
            while counts.withLock({ $0.running }) > 0, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(10))
            }
        }

        func add(frames: Int, dropped: Int, underflows: Int) {
            counts.withLock {
                $0.running -= 1
                $0.calls += 1
                $0.frames += frames
                $0.dropped += dropped
                $0.underflows += underflows
            }
        }

        func line() -> String {
            let c = counts.withLock { $0 }
            return "echo calls=\(c.calls) frames=\(c.frames) dropped=\(c.dropped) underflows=\(c.underflows)"
        }
    }

    static func start(on call: Call, engine: PJSUA, totals: Totals) async throws {
        let received = try await engine.audioFrames(from: call, format: format, buffer: .milliseconds(200))
        let writer = try await engine.audioFrameWriter(into: call, format: format, buffer: .milliseconds(60))
        totals.started()
        Task {
            // Ends with the call: the stream finishes, or a write throws once it is gone.
            var frames = 0
            for await frame in received {
                do { try await writer.write(frame.samples) } catch { break }
                frames += 1
            }
            totals.add(frames: frames, dropped: received.droppedFrames, underflows: writer.underflows)
        }
    }
}
