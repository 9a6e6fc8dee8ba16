import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

extension EngineTests {
    @Test("With the device attached by the app, no RTP flows until activateAudioDevice")
    func audioDeviceActivation() async throws {
        try await EngineHarness.run(media: MediaConfiguration(soundDevice: .null, soundDeviceActivation: .byApp)) { h in
            let engine = h.engine
            let (caller, callee) = try await h.selfCall()
            // The bridge has no clock: half a second of nothing sent (not a settle: nothing may come).
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await engine.streamStatistics(caller).packetsSent == 0)
            try await engine.activateAudioDevice()
            try await h.poll("25 RTP packets", timeout: .seconds(5)) {
                try await $0.streamStatistics(callee).packetsReceived >= 25
            }
            await engine.deactivateAudioDevice()
            let frozen = try await engine.streamStatistics(caller).packetsSent
            // Not a settle: 300 ms in which at most the packet in flight may still go out.
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await engine.streamStatistics(caller).packetsSent <= frozen + 1)
            await engine.shutdown()
            #expect(h.log.states(of: caller).last == .disconnected)
            #expect(h.log.states(of: callee).last == .disconnected)
        }
    }
}

extension EngineTests {
    /// The engine calls a `swiftpjsua listen --play` process, so the callee plays and the engine
    /// (the caller) records. Before the media I/O moved onto pjsip's I/O queue, the caller read
    /// no RTP for the first 500 ms of every call (pjmedia's worker slept out its poll timeout),
    /// then took a 24-packet burst that its jitter buffer kept as latency and shed by dropping
    /// a frame every ~180 ms. PCMU is forced because speex, the default, cannot carry a pure
    /// tone across any gap in its decoder state: a dropped frame, or a decoder that starts after
    /// the tone did, leaves a level error that never decays.
    @Test("The callee's tone reaches the caller from the call's start, at a steady level")
    func calleeToneReachesCaller() async throws {
        try await withTemporaryFolder { folder in
            // 0.2 of full scale: an RMS of 0.141, -17 dBFS.
            let tone = try folder.toneFile(duration: .seconds(10), amplitude: 0.2)
            let recording = folder.file("received.wav")
            let port = FreePort.udp()
            _ = try await PeerProcess.swiftpjsua(
                "swiftpjsua-listen", ["listen", "--bind", "127.0.0.1", "--port", String(port), "--play", tone.path],
                folder: folder)
            try await EngineHarness.run { h in
                try await h.engine.setCodecPriority("PCMU", 255)
                let call = try await h.engine.makeCall(to: "sip:bob@127.0.0.1:\(port)", from: h.account)
                try await h.log.first("audio active") { $0.hasActiveAudio(call) }
                try await h.engine.record(file: recording.path, from: call)
                #expect(try await h.engine.callInfo(call).audioCodec == "PCMU/8000")
                // Two seconds of RTP at 50 packets a second.
                try await h.poll("100 RTP packets") { try await $0.streamStatistics(call).packetsReceived >= 100 }
                try await h.hangUp(call)
            }
            let audio = try WAVAudio(contentsOf: recording)
            let firstPart = WAVAudio(
                sampleRate: audio.sampleRate, samples: Array(audio.samples.prefix(audio.sampleRate * 3 / 10)))
            let start = ToneAnalysis(firstPart, frequency: 1000)
            let whole = ToneAnalysis(audio, frequency: 1000)
            #expect(start.detected(minimumDuration: .milliseconds(200)), "first 300 ms: \(start)")
            #expect(whole.blocks >= 90 && whole.toneBlocks >= whole.blocks - 5, "\(whole)")
            #expect(abs(whole.levelDBFS + 17) < 1.5, "\(whole)")
        }
    }
}

extension EngineTests {
    @Test("Self-call: the 1 kHz tone played into one leg is recorded on the other")
    func selfCallCarriesTone() async throws {
        try await withTemporaryFolder { folder in
            let received = folder.file("received.wav")
            let echoed = folder.file("caller-received.wav")
            try await EngineHarness.run { h in
                let (caller, callee) = try await h.selfCall()
                try await h.playTone(into: caller)
                try await h.engine.record(file: received.path, from: callee)
                try await h.engine.record(file: echoed.path, from: caller)
                // 100 packets of 20 ms: two seconds of audio.
                try await h.poll("100 RTP packets received") {
                    try await $0.streamStatistics(callee).packetsReceived >= 100
                }
                let sent = try await h.engine.streamStatistics(caller)
                #expect(sent.packetsSent >= 100)
                #expect(try await h.engine.callInfo(caller).audioCodec != nil)
                try await h.hangUp(caller, waitingFor: callee)
            }
            // The recorders were closed when the calls ended (and pjsua was destroyed).
            let analysis = ToneAnalysis(try WAVAudio(contentsOf: received), frequency: 1000)
            #expect(analysis.detected(), "\(analysis)")
            #expect(analysis.toneEnergyRatio > 0.8, "\(analysis)")
            // The other direction carried no tone: the same check says no.
            let control = ToneAnalysis(try WAVAudio(contentsOf: echoed), frequency: 1000)
            #expect(!control.detected(), "\(control)")
        }
    }
}

extension EngineTests {
    @Test("Mute silences what a call sends; unmute brings the tone back")
    func muteAndUnmute() async throws {
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.selfCall()
            try await h.engine.setMuted(caller, muted: true)
            try await h.playTone(into: caller)
            let muted = try await h.recordTone(callee, to: h.folder.file("muted.wav"))
            #expect(!muted.detected(minimumDuration: .milliseconds(100)), "\(muted)")
            try await h.engine.setMuted(caller, muted: false)
            let unmuted = try await h.recordTone(callee, to: h.folder.file("unmuted.wav"))
            #expect(unmuted.detected(), "\(unmuted)")
            try await h.engine.hangup(caller)
        }
    }

    @Test("Early media: a 183 with SDP puts the caller in EARLY and the callee's tone is heard before any answer")
    func earlyMediaTone() async throws {
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.selfCall(statusCode: 183, until: .answered)
            try await h.log.wait("caller EARLY with audio") { events in
                events.contains { $0.isState(.early, of: caller) } && events.contains { $0.hasActiveAudio(caller) }
                    && events.contains { $0.hasActiveAudio(callee) }
            }
            try await h.playTone(into: callee)
            let analysis = try await h.recordTone(caller, to: h.folder.file("early.wav"))
            #expect(analysis.detected(), "\(analysis)")
            let early = h.log.events.first { $0.isState(.early, of: caller) }
            if case .callState(let change) = early { #expect(change.statusCode == 183) }
            #expect(try await h.engine.callInfo(caller).state == .early)
            #expect(!h.log.states(of: caller).contains(.confirmed))
            // The final answer follows the early media.
            try await h.engine.answer(callee, statusCode: 200)
            try await h.log.wait("both confirmed") { events in
                events.contains { $0.isState(.confirmed, of: caller) }
                    && events.contains { $0.isState(.confirmed, of: callee) }
            }
            #expect(h.log.states(of: caller) == [.calling, .early, .connecting, .confirmed])
            try await h.hangUp(caller, waitingFor: callee)
        }
    }
}

extension EngineTests {
    @Test(
        "stop(recorder) returns with the WAV file complete, whether or not a sound device clocks the bridge",
        arguments: [true, false])
    func recorderCompleteWhenStopReturns(clocked: Bool) async throws {
        let media = MediaConfiguration(soundDevice: .null, soundDeviceActivation: clocked ? .automatic : .byApp)
        try await EngineHarness.run(media: media) { h in
            let recording = h.folder.file("received.wav")
            let (caller, callee) = try await h.selfCall()
            try await h.playTone(into: caller)
            if !clocked {
                // The bridge runs while the device is attached, then the device goes away:
                // the recorder's removal would wait for a clock that never comes.
                try await h.engine.activateAudioDevice()
            }
            let start = try await h.engine.streamStatistics(callee).packetsReceived
            let recorder = try await h.engine.record(file: recording.path, from: callee)
            try await h.poll("a second of audio recorded") {
                try await $0.streamStatistics(callee).packetsReceived >= start + 50
            }
            if !clocked { await h.engine.deactivateAudioDevice() }
            let before = ContinuousClock.now
            try await h.engine.stop(recorder)
            let took = ContinuousClock.now - before
            // Read at once: the header's sizes must match the file (WAVAudio throws
            // .truncated otherwise) and the audio must be what was sent.
            let audio = try WAVAudio(contentsOf: recording)
            #expect(took < .milliseconds(500), "stop took \(took)")
            #expect(audio.duration >= .milliseconds(800), "\(audio.duration)")
            #expect(ToneAnalysis(audio, frequency: 1000).detected(), "\(ToneAnalysis(audio, frequency: 1000))")
            await h.engine.hangupAll()
        }
    }
}

extension EngineTests {
    @Test("A stopped player's handle cannot stop the newer player that reuses its id")
    func stalePlayerHandle() async throws {
        try await EngineHarness.run { h in
            let call = try await h.engine.makeCall(to: h.uri("self"), from: h.account)
            let first = try await h.playTone(into: call)
            try await h.engine.stop(first)
            await #expect(throws: PJSUAUsageError.unknownMediaPort) { try await h.engine.stop(first) }
            let second = try await h.playTone(into: call)
            #expect(second.id == first.id)
            #expect(second != first)
            await #expect(throws: PJSUAUsageError.unknownMediaPort) { try await h.engine.stop(first) }
            try await h.engine.stop(second)
            await h.engine.hangupAll()
        }
    }
}

extension EngineTests {
    @Test("play without looping raises playbackFinished once, after the file's length; a looping player never does")
    func playbackFinishedOnce() async throws {
        try await withTemporaryFolder { folder in
            let short = try folder.toneFile("short.wav", duration: .milliseconds(600), amplitude: 0.2)
            try await EngineHarness.run { h in
                try await h.engine.setCodecPriority("PCMU", 255)
                let (caller, callee) = try await h.selfCall()
                let received = try await h.engine.audioFrames(from: callee, format: AudioFrameFormat(sampleRate: 8000))
                let listening = Task { await Self.collect(received, for: .seconds(2)) }
                let looping = try await h.engine.play(file: short.path, into: callee, loop: true)
                let clock = ContinuousClock()
                let began = clock.now
                let once = try await h.engine.play(file: short.path, into: caller)
                let finished = try await h.log.first("playback finished") {
                    if case .playbackFinished(let f) = $0 { f.player == once } else { false }
                }
                let took = clock.now - began
                #expect(took >= .milliseconds(550) && took < .milliseconds(1500), "\(took)")
                #expect(finished.call == caller)
                // The callee heard the file once: about 600 ms of tone in 2 s of frames, then quiet.
                let analysis = Self.analysis(of: await listening.value, frequency: 1000)
                #expect(
                    analysis.toneDuration >= .milliseconds(400) && analysis.toneDuration <= .milliseconds(700),
                    "\(analysis)")
                let all = h.log.events.filter { if case .playbackFinished = $0 { true } else { false } }
                #expect(all.count == 1, "\(all) (the looping player \(looping) played its file three times over)")
                try await h.engine.hangup(caller)
            }
        }
    }
}
