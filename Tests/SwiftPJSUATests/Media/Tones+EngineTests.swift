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

extension EngineTests {
    /// A beep per key press is the natural use of one-shot tones. Each generator used to stay
    /// on the conference bridge until its call ended: one long call pressing keys filled the
    /// engine's bridge (2077 beeps with this build's slots), and then no new call could be
    /// answered (488).
    @Test("One-shot tones leave the bridge once played; a looping one stays until stopped")
    func oneShotTonesLeaveTheBridge() async throws {
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.first("audio on the callee") { $0.hasActiveAudio(callee) }
            let beep = [Tone(frequency: 500, duration: .milliseconds(1))]
            var beeps: [TonePlayer] = []
            // Key presses: a few beeps at a time (a burst of hundreds at once takes the bridge
            // seconds to play, each one relinking every source of the call).
            for _ in 0..<10 {
                for _ in 0..<10 { beeps.append(try await h.engine.playTones(beep, into: caller)) }
                try await Task.sleep(for: .milliseconds(100))
            }
            let device = try await h.engine.playTonesToSoundDevice(beep)
            let looping = try await h.engine.playTones(beep, into: caller, loop: true)
            // Removed within a sweep or two of their end: stopping them finds nothing.
            try await Task.sleep(for: .milliseconds(1500))
            var stillOn = 0
            for player in beeps + [device] {
                do { try await h.engine.stop(player); stillOn += 1 } catch PJSUAUsageError.unknownMediaPort {}
            }
            #expect(stillOn == 0, "\(stillOn) of \(beeps.count + 1) one-shot players were still on the bridge")
            try await h.engine.stop(looping)
            try await h.engine.hangup(caller)
        }
    }
}

extension EngineTests {
    /// Each attach links only the new port: a burst of 300 one-shot tones on one call costs
    /// 300 connects, not the 45 000 that relinking every source of the call each time did
    /// (2.17's bridge queues each one; 164 of 300 were still unplayed after 1.5 s).
    @Test("A burst of 300 one-shot tones on one call all play and leave the bridge within 1.5 s")
    func burstOfOneShotTones() async throws {
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.first("audio on the callee") { $0.hasActiveAudio(callee) }
            let beep = [Tone(frequency: 500, duration: .milliseconds(1))]
            var beeps: [TonePlayer] = []
            for _ in 0..<300 { beeps.append(try await h.engine.playTones(beep, into: caller)) }
            try await Task.sleep(for: .milliseconds(1500))
            var stillOn = 0
            for player in beeps {
                do { try await h.engine.stop(player); stillOn += 1 } catch PJSUAUsageError.unknownMediaPort {}
            }
            #expect(stillOn == 0, "\(stillOn) of 300 one-shot tones were still on the bridge")
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
