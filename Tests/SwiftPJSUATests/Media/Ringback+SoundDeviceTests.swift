import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// What the sound device would play, read through ``PJSUA/soundDeviceFrames(format:buffer:)``
/// while outgoing calls ring: local ringback after a 180 without early media, the far end's
/// early media after a 183 with SDP, nothing once answered or when turned off.
extension EngineTests {
    /// Frames of the sound device, read as they come, with marks at moments of the test.
    final class SoundDeviceRecording: Sendable {
        let stream: AudioFrameStream
        private let frames = Protected<[AudioFrame]>([])
        private let ended = Protected(false)
        private let reader: Task<Void, Never>

        init(_ stream: AudioFrameStream) {
            self.stream = stream
            let frames = frames, ended = ended
            reader = Task {
                for await frame in stream { frames.withLock { $0.append(frame) } }
                if !Task.isCancelled { ended.withLock { $0 = true } }
            }
        }

        /// Whether the stream ended by itself (not by ``stop()``) within `timeout`.
        func endsByItself(within timeout: Duration) async throws -> Bool {
            try? await waitUntil("the sound-device stream to end", timeout: timeout) { ended.withLock { $0 } }
            return ended.withLock { $0 }
        }

        /// Frames read so far: a mark for "now".
        var mark: Int { frames.withLock { $0.count } }

        /// Waits until `duration` more audio has been read.
        func wait(for duration: Duration) async throws {
            let wanted = mark + Int(duration / stream.format.frameDuration)
            try await waitUntil(
                "the sound device's frames", timeout: duration + .seconds(3), every: .milliseconds(10)
            ) {
                mark >= wanted
            }
        }

        /// The frames between two marks, less `trim` of audio at each end (signalling and
        /// the bridge's tick make the edges a frame or two uncertain).
        func audio(_ range: Range<Int>, trim: Duration = .milliseconds(200)) -> WAVAudio {
            let edge = Int(trim / stream.format.frameDuration)
            let all = frames.withLock { $0 }
            let lower = min(all.count, range.lowerBound + edge),
                upper = min(all.count, max(lower, range.upperBound - edge))
            return WAVAudio(sampleRate: stream.format.sampleRate, samples: all[lower..<upper].flatMap(\.samples))
        }

        func analysis(_ range: Range<Int>, frequency: Double) -> ToneAnalysis {
            ToneAnalysis(audio(range), frequency: frequency)
        }

        /// The largest sample between two marks.
        func peak(_ range: Range<Int>) -> Int {
            audio(range).samples.map { abs(Int($0)) }.max() ?? 0
        }

        var sequenceNumbers: [UInt64] { frames.withLock { $0.map(\.sequenceNumber) } }

        func stop() async {
            reader.cancel()
            await reader.value
        }
    }

    /// G.711 μ-law of one sample (ITU-T G.711, with the usual bias of 0x84).
    static func muLaw(_ sample: Int16) -> UInt8 {
        var magnitude = Int(sample)
        let sign = magnitude < 0 ? 0x80 : 0
        magnitude = min(abs(magnitude), 32635) + 0x84
        var exponent = 7
        var mask = 0x4000
        while exponent > 0, magnitude & mask == 0 {
            exponent -= 1
            mask >>= 1
        }
        let mantissa = (magnitude >> (exponent + 3)) & 0x0F
        return UInt8(~(sign | exponent << 4 | mantissa) & 0xFF)
    }

    static func isRinging(_ event: PJSUAEvent, _ call: Call) -> Bool {
        if case .callState(let change) = event {
            change.call == call && change.state == .early && change.statusCode == 180
        } else {
            false
        }
    }

    @Test("Local ringback: a 180 without SDP plays the ringback tone to the sound device until the 200")
    func localRingbackUntilAnswered() async throws {
        try await withSipp(scenario: "uas_ringing_then_answer.xml") { sipp in
            try await EngineHarness.run { h in
                // 8 kHz in 10 ms frames: the tap resamples the 16 kHz bridge and cuts its frames in two.
                let recording = SoundDeviceRecording(
                    try await h.engine.soundDeviceFrames(
                        format: AudioFrameFormat(sampleRate: 8000, frameDuration: .milliseconds(10))))
                let call = try await h.engine.makeCall(to: sipp.uri, from: h.account)
                try await h.log.first("180 Ringing") { Self.isRinging($0, call) }
                let ringing = recording.mark
                try await h.log.first("answered") { $0.isState(.confirmed, of: call) }
                let answered = recording.mark
                try await recording.wait(for: .milliseconds(1500))
                let after = recording.mark
                // Ringback Europe: 425 Hz for 1 s, then 4 s of silence; the ring phase is 2 s.
                let ring = recording.analysis(ringing..<answered, frequency: 425)
                #expect(ring.toneDuration >= .milliseconds(600), "ringback while ringing: \(ring)")
                let quiet = recording.analysis(answered..<after, frequency: 425)
                #expect(quiet.toneBlocks == 0, "after the 200: \(quiet)")
                #expect(recording.peak(answered..<after) < 100, "after the 200 the peer sends nothing")
                // Frames came without a gap, in the stream's format.
                let sequence = recording.sequenceNumbers
                #expect(sequence == (0..<UInt64(sequence.count)).map { $0 })
                try await h.hangUp(call)
                await recording.stop()
            }
            #expect(try await sipp.finish().exitStatus == 0)
        }
    }

    @Test("Local ringback off (localRingback nil): a 180 without SDP leaves the sound device silent")
    func localRingbackOff() async throws {
        try await withSipp(scenario: "uas_ringing_then_answer.xml") { sipp in
            try await EngineHarness.run(media: MediaConfiguration(soundDevice: .null, localRingback: nil)) { h in
                let recording = SoundDeviceRecording(try await h.engine.soundDeviceFrames())
                let call = try await h.engine.makeCall(to: sipp.uri, from: h.account)
                try await h.log.first("180 Ringing") { Self.isRinging($0, call) }
                let ringing = recording.mark
                try await h.log.first("answered") { $0.isState(.confirmed, of: call) }
                let answered = recording.mark
                #expect(answered - ringing >= 75, "the ring phase lasted \(answered - ringing) frames")
                let ring = recording.analysis(ringing..<answered, frequency: 425)
                #expect(ring.toneBlocks == 0, "\(ring)")
                #expect(recording.peak(ringing..<answered) < 100)
                try await h.hangUp(call)
                await recording.stop()
            }
            #expect(try await sipp.finish().exitStatus == 0)
        }
    }

    @Test(
        """
        Early media: after a 183 with SDP the sound device plays the peer's RTP, not ringback, also through a later \
        180
        """
    )
    func earlyMediaReplacesRingback() async throws {
        try await withTemporaryFolder { folder in
            // 10 s of a 1 kHz tone as PCMU, which sipp streams from the 183 on.
            let audio = folder.file("early.ulaw")
            let tone = WAVAudio.tone(frequency: 1000, duration: .seconds(10), sampleRate: 8000, amplitude: 0.3)
            try Data(tone.samples.map(Self.muLaw)).write(to: audio)
            let template = try String(
                contentsOfFile: Repository.scenario("uas_early_media_template.xml"), encoding: .utf8)
            let scenario = folder.file("uas_early_media.xml")
            try template.replacingOccurrences(of: "@AUDIO@", with: audio.path).write(
                to: scenario, atomically: true, encoding: .utf8)
            let sipp = try await Sipp.start(scenario: scenario.path, folder: folder)
            // A steady ringback (no 4 s pause), so that any ringback in the early-media phase shows.
            let steady = Tone(frequency: 425, duration: .seconds(1))
            try await EngineHarness.run(media: MediaConfiguration(soundDevice: .null, localRingback: [steady])) { h in
                try await h.engine.setCodecPriority("PCMU", 255)
                let recording = SoundDeviceRecording(
                    try await h.engine.soundDeviceFrames(format: AudioFrameFormat(sampleRate: 48000)))
                let call = try await h.engine.makeCall(to: sipp.uri, from: h.account)
                try await h.log.first("180 Ringing") { Self.isRinging($0, call) }
                let ringing = recording.mark
                try await h.log.first("early media") {
                    if case .callState(let change) = $0 {
                        change.call == call && change.statusCode == 183
                    } else {
                        false
                    }
                }
                let early = recording.mark
                try await h.log.wait("180 again") { $0.filter { Self.isRinging($0, call) }.count >= 2 }
                let ringingAgain = recording.mark
                try await h.log.first("answered") { $0.isState(.confirmed, of: call) }
                let answered = recording.mark
                try await recording.wait(for: .seconds(1))
                let after = recording.mark

                let ring = recording.analysis(ringing..<early, frequency: 425)
                #expect(ring.toneBlocks >= ring.blocks - 1 && ring.blocks >= 40, "ringback before the 183: \(ring)")
                for (name, range) in [
                    ("183", early..<ringingAgain), ("180 after 183", ringingAgain..<answered),
                    ("200", answered..<after),
                ] {
                    let ringback = recording.analysis(range, frequency: 425)
                    let peer = recording.analysis(range, frequency: 1000)
                    // Mixed with the peer's tone a ringback would not own half of a block: look at its share.
                    #expect(
                        ringback.toneBlocks == 0 && ringback.toneEnergyRatio < 0.02,
                        "ringback after the \(name): \(ringback)")
                    #expect(
                        peer.toneBlocks >= peer.blocks * 3 / 4 && peer.blocks >= 20,
                        "the peer's early media after the \(name): \(peer)")
                }
                try await h.hangUp(call)
                await recording.stop()
            }
            #expect(try await sipp.finish().exitStatus == 0)
        }
    }

    @Test(
        "Local ringback: ringing calls share one generator; it stops with the last, starts again, and shutdown ends it")
    func localRingbackShared() async throws {
        try await withTemporaryFolder { folder in
            // sip:never@ rings until cancelled (uas_mixed_outcomes.xml); four calls in all.
            let sipp = try await Sipp.start(scenario: "uas_mixed_outcomes.xml", calls: 4, folder: folder)
            let steady = Tone(frequency: 425, duration: .seconds(1))
            let recording = try await EngineHarness.run(
                media: MediaConfiguration(soundDevice: .null, localRingback: [steady])
            ) { h in
                let recording = SoundDeviceRecording(try await h.engine.soundDeviceFrames())
                let target = "sip:never@127.0.0.1:\(sipp.port)"
                func ring() async throws -> Call {
                    let call = try await h.engine.makeCall(to: target, from: h.account)
                    try await h.log.first("180 Ringing") { Self.isRinging($0, call) }
                    return call
                }
                let first = try await ring()
                let firstRinging = recording.mark
                try await recording.wait(for: .milliseconds(800))
                let oneRinging = recording.mark
                let second = try await ring()
                let third = try await ring()
                let threeStart = recording.mark
                try await recording.wait(for: .milliseconds(800))
                let threeRinging = recording.mark
                let one = recording.analysis(firstRinging..<oneRinging, frequency: 425)
                let three = recording.analysis(threeStart..<threeRinging, frequency: 425)
                #expect(one.toneBlocks >= one.blocks - 1 && three.toneBlocks >= three.blocks - 1, "\(one) \(three)")
                // One generator whatever the number of ringing calls: three would sum to 3× the level.
                let peakOne = recording.peak(firstRinging..<oneRinging),
                    peakThree = recording.peak(threeStart..<threeRinging)
                #expect(
                    peakOne > 1000 && Double(peakThree) < Double(peakOne) * 1.2, "peaks \(peakOne) and \(peakThree)")

                // Ending ringing calls (CANCEL): the ringback goes on while one still rings.
                try await h.engine.hangup(first)
                try await h.hangUp(second)
                let twoEnded = recording.mark
                try await recording.wait(for: .milliseconds(600))
                let stillOne = recording.analysis(twoEnded..<recording.mark, frequency: 425)
                #expect(stillOne.toneBlocks >= stillOne.blocks - 1, "one call still rings: \(stillOne)")
                try await h.hangUp(third)
                let allEnded = recording.mark
                try await recording.wait(for: .milliseconds(800))
                let silent = recording.mark
                #expect(recording.analysis(allEnded..<silent, frequency: 425).toneBlocks == 0)
                #expect(recording.peak(allEnded..<silent) < 100, "no ringing call, no ringback")

                // It starts again for the next call; shutdown with that call ringing ends it.
                _ = try await ring()
                let again = recording.mark
                try await recording.wait(for: .milliseconds(600))
                let ringingAgain = recording.analysis(again..<recording.mark, frequency: 425)
                #expect(ringingAgain.toneBlocks >= ringingAgain.blocks - 1, "\(ringingAgain)")
                return recording
            }
            // Shutdown took the tap out: the stream ends instead of waiting for frames forever.
            #expect(try await recording.endsByItself(within: .seconds(2)), "the sound-device stream ended at shutdown")
            await recording.stop()
            // (sipp's last call, cancelled by shutdown, may still wait for an ACK: the defer stops it.)
        }
    }

    @Test("Sound-device frames: one stream at a time, a null sound device only; stop ends it and a new one can start")
    func soundDeviceFramesMisuse() async throws {
        try await EngineHarness.run { h in
            let stream = try await h.engine.soundDeviceFrames()
            #expect(stream.call == nil)
            await #expect(throws: PJSUAUsageError.self) { _ = try await h.engine.soundDeviceFrames() }
            await #expect(throws: PJSUAUsageError.self) {
                _ = try await h.engine.soundDeviceFrames(format: AudioFrameFormat(sampleRate: 11025))
            }
            // Frames keep coming with no call at all (the null device clocks the bridge), as silence.
            var iterator = stream.makeAsyncIterator()
            let frame = try #require(await iterator.next())
            #expect(frame.samples.count == 320 && frame.samples.allSatisfy { $0 == 0 })
            try await h.engine.stop(stream)
            await #expect(throws: PJSUAUsageError.self) { try await h.engine.stop(stream) }
            var drained = 0
            while await iterator.next() != nil { drained += 1 }
            #expect(drained <= 50, "the stream ended after its buffered frames")
            let next = try await h.engine.soundDeviceFrames(format: AudioFrameFormat(sampleRate: 8000))
            var nextIterator = next.makeAsyncIterator()
            #expect(await nextIterator.next()?.samples.count == 160)
            try await h.engine.stop(next)
        }
        await #expect(throws: PJSUAUsageError.self) {
            try await EngineHarness.run(media: MediaConfiguration(soundDevice: .null, localRingback: [])) { _ in }
        }
    }

    @Test(
        """
        Sound-device frames follow the device: none before activateAudioDevice, the mix after, again after a \
        re-activation
        """
    )
    func soundDeviceFramesFollowActivation() async throws {
        let media = MediaConfiguration(soundDevice: .null, soundDeviceActivation: .byApp)
        try await EngineHarness.run(media: media) { h in
            try await h.engine.playTonesToSoundDevice([Tone(frequency: 1000, duration: .seconds(1))], loop: true)
            let recording = SoundDeviceRecording(try await h.engine.soundDeviceFrames())
            // Not a settle: 300 ms in which no frame may come.
            try await Task.sleep(for: .milliseconds(300))
            #expect(recording.mark == 0, "no device, no clock, no frames")
            for round in 1...2 {
                try await h.engine.activateAudioDevice()
                let start = recording.mark
                try await recording.wait(for: .milliseconds(800))
                let tone = recording.analysis(start..<recording.mark, frequency: 1000)
                #expect(tone.toneBlocks >= tone.blocks - 1 && tone.blocks >= 15, "activation \(round): \(tone)")
                await h.engine.deactivateAudioDevice()
                let stopped = recording.mark
                // Not a settle: 300 ms in which at most the frames in flight may come.
                try await Task.sleep(for: .milliseconds(300))
                #expect(recording.mark - stopped <= 2, "frames after deactivation")
            }
            await recording.stop()
        }
        // A real device plays the mix itself: the stream is for the null device only.
        let real = MediaConfiguration(soundDevice: .systemDefault, soundDeviceActivation: .byApp)
        _ = try await EngineHarness.run(media: real) { h in
            await #expect(throws: PJSUAUsageError.self) { _ = try await h.engine.soundDeviceFrames() }
        }
    }
}
