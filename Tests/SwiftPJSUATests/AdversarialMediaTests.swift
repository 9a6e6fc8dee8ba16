import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Frame streams, writers and tones used the way an unlucky app would: from several tasks,
/// across engine runs, in loops.
extension EngineTests {
    @Test("Two tasks writing into one frame writer at once: neither traps, and they drain in the time of the frames written (none sent twice)")
    func concurrentWritesIntoOneWriter() async throws {
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.first("audio on the callee") { $0.hasActiveAudio(callee) }
            let format = AudioFrameFormat(sampleRate: 8000, frameDuration: .milliseconds(20))
            // A queue of two frames: both writes wait for room, so the second enters the actor
            // while the first is suspended.
            let writer = try await h.engine.audioFrameWriter(for: caller, format: format, buffer: .milliseconds(40))
            let frames = 25
            let chunk = [Int16](repeating: 100, count: format.samplesPerFrame * frames)
            let clock = ContinuousClock()
            let began = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<2 { group.addTask { try await writer.write(chunk) } }
                try await group.waitForAll()
            }
            try await h.poll("the queue drained") { _ in await writer.queuedDuration == .zero }
            let took = clock.now - began
            // 50 frames of 20 ms through the bridge: about 1 s. Frames sent twice would take longer.
            #expect(took < .milliseconds(1500), "\(took)")
            #expect(await writer.queuedDuration == .zero)
            try await h.engine.hangup(caller)
        }
    }
}

@Suite("Tone values")
struct ToneValueTests {
    /// Characters whose upper case is more than one character (ß → SS, the ﬁ ligature → FI)
    /// or none that is a key: no DTMF tone, and no trap making a Character of several.
    @Test("Tone.dtmf of a character whose upper case is two characters is nil, not a trap")
    func dtmfOfMultiCharacterUppercase() {
        #expect(Tone.dtmf("ß") == nil)
        #expect(Tone.dtmf("\u{FB01}") == nil)
        #expect(throws: PJSUAUsageError.invalidDTMFDigits("1ß")) { try Tone.dtmf(digits: "1ß") }
        #expect(Tone.dtmf("d")?.secondFrequency == 1633)
    }
}
