import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Audio as Swift values: frame streams of what a call receives, writers of what it sends.
extension EngineTests {
    /// Reads frames for `duration` of audio (or until the stream ends).
    static func collect(_ stream: AudioFrameStream, for duration: Duration) async -> [AudioFrame] {
        var frames: [AudioFrame] = []
        let wanted = Int((duration / stream.format.frameDuration).rounded())
        for await frame in stream {
            frames.append(frame)
            if frames.count >= wanted { break }
        }
        return frames
    }

    static func analysis(of frames: [AudioFrame], frequency: Double) -> ToneAnalysis {
        ToneAnalysis(
            WAVAudio(sampleRate: frames.first?.sampleRate ?? 8000, samples: frames.flatMap(\.samples)),
            frequency: frequency)
    }

    @Test("A call's frame streams at 8, 16 and 48 kHz show the peer's 1 kHz tone, in whole frames, none dropped")
    func frameStreamsShowTheTone() async throws {
        try await withTemporaryFolder { folder in
            let tone = try folder.toneFile(duration: .seconds(10), amplitude: 0.2)
            try await EngineHarness.run { h in
                try await h.engine.setCodecPriority("PCMU", 255)
                let (caller, callee) = try await h.selfCall()
                try await h.engine.play(file: tone.path, into: caller)
                let formats = [
                    AudioFrameFormat(sampleRate: 8000, frameDuration: .milliseconds(20)),
                    AudioFrameFormat(sampleRate: 16000, frameDuration: .milliseconds(10)),
                    AudioFrameFormat(sampleRate: 48000, frameDuration: .milliseconds(20)),
                ]
                var streams: [AudioFrameStream] = []
                for format in formats { streams.append(try await h.engine.audioFrames(from: callee, format: format)) }
                let results = await withTaskGroup(of: (Int, [AudioFrame]).self) { group in
                    for (index, stream) in streams.enumerated() {
                        group.addTask { (index, await Self.collect(stream, for: .seconds(3))) }
                    }
                    var results: [Int: [AudioFrame]] = [:]
                    for await (index, frames) in group { results[index] = frames }
                    return results
                }
                for (index, stream) in streams.enumerated() {
                    let frames = results[index] ?? []
                    let format = formats[index]
                    #expect(frames.count == Int(Duration.seconds(3) / format.frameDuration), "\(format)")
                    #expect(
                        frames.allSatisfy {
                            $0.samples.count == format.samplesPerFrame && $0.sampleRate == format.sampleRate
                        })
                    // Consecutive sequence numbers from 0 and timestamps in samples: nothing dropped.
                    #expect(frames.map(\.sequenceNumber) == (0..<UInt64(frames.count)).map { $0 }, "\(format)")
                    #expect(frames.last?.timestamp == UInt64(frames.count - 1) * UInt64(format.samplesPerFrame))
                    #expect(stream.droppedFrames == 0, "\(format)")
                    // The first half second holds the call's start-up; the rest is steady state.
                    let steady = Array(frames.dropFirst(Int(Duration.milliseconds(500) / format.frameDuration)))
                    let analysis = Self.analysis(of: steady, frequency: 1000)
                    #expect(
                        analysis.toneBlocks >= analysis.blocks - 2 && analysis.blocks >= 120, "\(format): \(analysis)")
                    #expect(Self.analysis(of: steady, frequency: 1500).toneBlocks == 0, "\(format)")
                }
                try await h.engine.hangup(caller)
            }
        }
    }

    @Test("Frames written into a call reach the peer: its recording holds the tone; no underflow while writing")
    func writtenFramesReachThePeer() async throws {
        try await withTemporaryFolder { folder in
            let recording = folder.file("received.wav")
            try await EngineHarness.run { h in
                try await h.engine.setCodecPriority("PCMU", 255)
                let (caller, callee) = try await h.selfCall()
                let format = AudioFrameFormat(sampleRate: 16000, frameDuration: .milliseconds(20))
                let writer = try await h.engine.audioFrameWriter(
                    into: caller, format: format, buffer: .milliseconds(200))
                let tone = WAVAudio.tone(
                    frequency: 1000, duration: .seconds(3), sampleRate: 16000, amplitude: 0.2
                ).samples
                let clock = ContinuousClock()
                let began = clock.now
                // Writes of 7 ms each (not whole frames): the writer keeps the remainders.
                var offset = 0
                var recorder: Recorder?
                while offset < tone.count {
                    let end = min(tone.count, offset + 112)
                    try await writer.write(tone[offset..<end])
                    offset = end
                    if recorder == nil, clock.now - began > .milliseconds(300) {
                        recorder = try await h.engine.record(file: recording.path, from: callee)
                    }
                    #expect(await writer.queuedDuration <= .milliseconds(220))
                }
                let took = clock.now - began
                // 3 s of audio through a 200 ms queue: the writer was held to real time.
                #expect(took >= .milliseconds(2700), "\(took)")
                #expect(writer.underflows == 0, "underflows while writing: \(writer.underflows)")
                // The queue runs dry after the last write.
                try await waitUntil("an underflow after the last write", timeout: .seconds(2)) { writer.underflows > 0 }
                try await h.engine.stop(try #require(recorder))
                try await h.hangUp(caller)
                // The writer leaves the bridge with its call: writing into it throws.
                try await waitUntil("a write into the ended call to throw", timeout: .seconds(2)) {
                    do { try await writer.write([Int16](repeating: 0, count: 320)) } catch is PJSUAUsageError {
                        return true
                    }
                    return false
                }
            }
            let analysis = ToneAnalysis(try WAVAudio(contentsOf: recording), frequency: 1000)
            #expect(analysis.detected(minimumDuration: .seconds(2)), "\(analysis)")
        }
    }

    @Test("A reader that falls behind loses the oldest frames, counted, with a gap in sequence numbers")
    func slowReaderDropsOldest() async throws {
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.selfCall()
            let stream = try await h.engine.audioFrames(from: callee, buffer: .milliseconds(400))
            // Not a settle: the second in which the reader reads nothing is what is under test.
            try await Task.sleep(for: .seconds(1))
            let dropped = stream.droppedFrames
            // One second of 20 ms frames into a 20-frame ring: about 30 dropped.
            #expect(dropped >= 20 && dropped <= 40, "\(dropped)")
            var iterator = stream.makeAsyncIterator()
            let first = try #require(await iterator.next())
            #expect(first.sequenceNumber >= UInt64(dropped), "the oldest went: first is \(first.sequenceNumber)")
            try await h.engine.hangup(caller)
        }
    }

    @Test("A frame stream ends when its call ends, when stopped, and at shutdown")
    func frameStreamsEnd() async throws {
        let engine = PJSUA()
        let log = EventLog(engine.events)
        try await engine.start(
            Configuration(
                transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)],
                media: MediaConfiguration(soundDevice: .null)))
        do {
            try await Self.streamsEnd(engine: engine, log: log)
        } catch {
            await engine.shutdown()
            throw error
        }
    }

    private static func streamsEnd(engine: PJSUA, log: EventLog) async throws {
        let account = try await engine.addLocalAccount()
        let port = try #require(try await engine.transports().first?.port)
        let (caller, callee) = try await engine.answeredSelfCall(
            to: "sip:self@127.0.0.1:\(port)", from: account, log: log)
        try await log.first("audio on the callee") { $0.hasActiveAudio(callee) }
        let byHangup = try await engine.audioFrames(from: callee)
        let byStop = try await engine.audioFrames(from: caller)
        let second = try await engine.answeredSelfCall(
            to: "sip:self@127.0.0.1:\(port)", from: account, log: log, matching: ())
        try await log.first("audio on the second callee") { $0.hasActiveAudio(second.callee) }
        let byShutdown = try await engine.audioFrames(from: second.callee)
        let counts = Protected([0, 0, 0])
        func drain(_ stream: AudioFrameStream, _ index: Int) -> Task<Int, Never> {
            Task {
                var count = 0
                for await _ in stream {
                    count += 1
                    counts.withLock { $0[index] = count }
                }
                return count
            }
        }
        let tasks = [drain(byHangup, 0), drain(byStop, 1), drain(byShutdown, 2)]
        try await waitUntil("frames on all three streams") { counts.withLock { $0.allSatisfy { $0 > 5 } } }
        try await engine.stop(byStop)
        await #expect(throws: PJSUAUsageError.unknownMediaPort) { try await engine.stop(byStop) }
        let stopped = await tasks[1].value
        #expect(stopped > 5)
        try await engine.hangup(callee)
        try await log.first("ended") { $0.isState(.disconnected, of: callee) }
        let hungUp = try await withDeadline("stream of the ended call", .seconds(2)) { await tasks[0].value }
        #expect(hungUp > 5)
        await engine.shutdown()
        let shutDown = try await withDeadline("stream at shutdown", .seconds(2)) { await tasks[2].value }
        #expect(shutDown > 5)
    }

    @Test("Frame streams and writers refuse unknown calls, unsupported formats and buffers, and a stopped writer")
    func frameMisuseThrows() async throws {
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.selfCall()
            for format in [
                AudioFrameFormat(sampleRate: 44100), AudioFrameFormat(frameDuration: .milliseconds(30)),
                AudioFrameFormat(sampleRate: 0), AudioFrameFormat(frameDuration: .zero),
            ] {
                await #expect(throws: PJSUAUsageError.self, "\(format)") {
                    try await h.engine.audioFrames(from: callee, format: format)
                }
                await #expect(throws: PJSUAUsageError.self, "\(format)") {
                    try await h.engine.audioFrameWriter(into: callee, format: format)
                }
            }
            for buffer in [Duration.zero, .milliseconds(20), .seconds(11), .seconds(-1)] {
                await #expect(throws: PJSUAUsageError.self, "\(buffer)") {
                    try await h.engine.audioFrames(from: callee, buffer: buffer)
                }
            }
            let stale = Call(slot: callee.slot, generation: callee.generation + 1000)
            await #expect(throws: PJSUAUsageError.unknownCall(stale)) { try await h.engine.audioFrames(from: stale) }
            let writer = try await h.engine.audioFrameWriter(into: caller)
            try await h.engine.stop(writer)
            await #expect(throws: PJSUAUsageError.unknownMediaPort) {
                try await writer.write([Int16](repeating: 1, count: 640))
            }
            await #expect(throws: PJSUAUsageError.unknownMediaPort) { try await h.engine.stop(writer) }
            try await h.engine.hangup(caller)
        }
        let engine = PJSUA()
        await #expect(throws: PJSUAUsageError.notStarted) {
            try await engine.audioFrames(from: Call(slot: 0, generation: 1))
        }
    }
}

extension EngineTests {
    @Test(
        """
        Two tasks writing into one frame writer at once: neither traps, and they drain in the time of the frames \
        written (none sent twice)
        """
    )
    func concurrentWritesIntoOneWriter() async throws {
        try await EngineHarness.run { h in
            let (caller, _) = try await h.selfCall()
            let format = AudioFrameFormat(sampleRate: 8000, frameDuration: .milliseconds(20))
            // A queue of two frames: both writes wait for room, so the second enters the actor
            // while the first is suspended.
            let writer = try await h.engine.audioFrameWriter(into: caller, format: format, buffer: .milliseconds(40))
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
