/// The PCM format of an ``AudioFrameStream`` or an ``AudioFrameWriter``: mono, signed
/// 16-bit samples at `sampleRate`, cut in frames of `frameDuration`. pjmedia's conference
/// bridge resamples and re-frames between this format and the call's codec.
public struct AudioFrameFormat: Sendable, Hashable, CustomStringConvertible {
    /// Samples per second (Hz): 8000, 16000, 32000 or 48000.
    public var sampleRate: Int
    /// The length of one frame: 10 or 20 ms.
    public var frameDuration: Duration

    /// The sample rates a frame port can run at.
    public static let supportedSampleRates: Set<Int> = [8000, 16000, 32000, 48000]
    /// The frame lengths a frame port can run at.
    public static let supportedFrameDurations: Set<Duration> = [.milliseconds(10), .milliseconds(20)]

    /// A format; checked when a stream or writer is made (``PJSUAUsageError/invalidArgument(_:)``).
    public init(sampleRate: Int = 16000, frameDuration: Duration = .milliseconds(20)) {
        self.sampleRate = sampleRate
        self.frameDuration = frameDuration
    }

    /// Samples in one frame (`sampleRate × frameDuration`), for example 320 at 16 kHz, 20 ms.
    public var samplesPerFrame: Int {
        Int(Int64(sampleRate) * frameDuration.milliseconds / 1000)
    }

    /// The rate and frame length, for logs: `16000 Hz, 20 ms frames`.
    public var description: String { "\(sampleRate) Hz, \(frameDuration.milliseconds) ms frames" }

    /// Frames that fit in `duration` (at least 2), checked against `limit`.
    func frames(in duration: Duration, limit: Duration = .seconds(10), what: String) throws(PJSUAUsageError) -> Int {
        guard duration >= frameDuration * 2, duration <= limit else {
            throw .invalidArgument("\(what) of \(duration) is not between two frames and \(limit)")
        }
        return Int(duration.milliseconds / frameDuration.milliseconds)
    }
}

extension AudioFrameFormat: Validatable {
    func validate() throws(PJSUAUsageError) {
        guard Self.supportedSampleRates.contains(sampleRate) else {
            throw .invalidArgument("audio frame sample rate \(sampleRate) Hz is not one of 8000, 16000, 32000, 48000")
        }
        guard Self.supportedFrameDurations.contains(frameDuration) else {
            throw .invalidArgument("audio frame duration \(frameDuration) is not 10 or 20 ms")
        }
    }
}

/// One frame of audio a call received.
public struct AudioFrame: Sendable, Hashable {
    /// Counts the frames the stream produced, from 0. A gap means frames were dropped
    /// because the reader fell behind (see ``AudioFrameStream/droppedFrames``).
    public var sequenceNumber: UInt64
    /// The media time of the frame's first sample, in samples at the stream's sample
    /// rate since the stream began (like an RTP timestamp starting at 0):
    /// `sequenceNumber × samplesPerFrame`.
    public var timestamp: UInt64
    /// The frame's sample rate (Hz).
    public var sampleRate: Int
    /// Mono signed 16-bit samples, `samplesPerFrame` of them. Silence (zeros) while the
    /// call receives nothing, so frames keep their pace.
    public var samples: [Int16]

    /// A frame from its parts, as the stream makes it (or a test builds one); nothing is
    /// checked: `samples.count` need not match a format.
    public init(sequenceNumber: UInt64, timestamp: UInt64, sampleRate: Int, samples: [Int16]) {
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.sampleRate = sampleRate
        self.samples = samples
    }

    /// The frame's length.
    public var duration: Duration {
        sampleRate > 0 ? .microseconds(Int64(samples.count) * 1_000_000 / Int64(sampleRate)) : .zero
    }
}

/// The audio a call receives, or what the conference bridge sends to the sound device, as an
/// `AsyncSequence` of ``AudioFrame``s in the stream's ``format``. Made by
/// ``PJSUA/audioFrames(from:format:buffer:)`` and ``PJSUA/soundDeviceFrames(format:buffer:)``.
///
/// **Threading and buffering.** pjmedia's clock thread copies each frame the bridge mixes
/// for the stream into a ring of fixed size (the `buffer` given when the stream was made)
/// without locking or allocating. When the reader falls behind and the ring is full, the
/// oldest frame is dropped and counted in ``droppedFrames``; sequence numbers show the gap.
/// The iterator polls the ring, sleeping half a frame when it is empty, so a frame reaches
/// the reader at most half a frame after the bridge produced it.
///
/// The sequence ends (returns `nil`) when the call ends (a call's stream), the stream is stopped
/// (``PJSUA/stop(_:)-(AudioFrameStream)``), the engine shuts down, or the iterating task
/// is cancelled. Iterate it from one task at a time.
public struct AudioFrameStream: AsyncSequence, Sendable {
    /// Each element is one frame of received audio.
    public typealias Element = AudioFrame

    let port: FramePort

    /// The call whose received audio this is; `nil` for a stream of the sound device
    /// (``PJSUA/soundDeviceFrames(format:buffer:)``).
    public var call: Call? { port.call }
    /// The stream's format.
    public var format: AudioFrameFormat { port.format }
    /// Frames dropped so far because the reader fell behind.
    public var droppedFrames: Int { port.droppedFrames }

    /// An iterator over the frames not read yet. Iterators of one stream share its ring:
    /// each frame goes to one of them.
    public func makeAsyncIterator() -> Iterator { Iterator(port: port) }

    /// Reads the stream's ring, sleeping half a frame while it is empty.
    public struct Iterator: AsyncIteratorProtocol {
        let port: FramePort

        /// The oldest frame not read yet, waiting for one while the ring is empty; `nil`
        /// once the call ended, the stream was stopped, the engine shut down or the task
        /// was cancelled.
        public mutating func next() async -> AudioFrame? {
            let format = port.format
            let pause = format.frameDuration / 2
            while !Task.isCancelled {
                switch port.read() {
                case .frame(let sequence, let samples):
                    return AudioFrame(
                        sequenceNumber: sequence, timestamp: sequence * UInt64(format.samplesPerFrame),
                        sampleRate: format.sampleRate, samples: samples)
                case .ended:
                    return nil
                case .empty:
                    do { try await Task.sleep(for: pause) } catch { return nil }
                }
            }
            return nil
        }
    }
}

extension AudioFrameStream: Hashable {
    /// Two values are equal when they are the same stream (one ``PJSUA/audioFrames(from:format:buffer:)``
    /// call), whatever they have read.
    public static func == (a: Self, b: Self) -> Bool { a.port === b.port }
    /// Hashes the stream's identity, consistently with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(port)) }
}

/// Sends audio into a call: PCM the app writes is cut into frames of the writer's
/// ``format`` and queued for the conference bridge, which takes one frame per tick.
/// Made by ``PJSUA/audioFrameWriter(into:format:buffer:)``.
///
/// **Backpressure.** The queue holds `buffer` of audio; ``write(_:)`` suspends while it is
/// full, so a writer faster than real time is held to real time. ``queuedDuration`` tells
/// how much is waiting. **Underflow.** When the queue runs empty after the first write, the
/// call gets silence for that frame, counted in ``underflows``.
///
/// Samples go out in the order the writes were made, also when several tasks write at
/// once (the writer is an actor; a write waiting for room may send later writes' samples).
/// After the call ends or the writer is stopped, writing throws
/// ``PJSUAUsageError/unknownMediaPort``.
public actor AudioFrameWriter {
    let port: FramePort
    /// The call this writer sends into.
    public nonisolated let call: Call
    /// Samples written but short of a whole frame, kept for the next write.
    private var pending: [Int16] = []

    init(port: FramePort, call: Call) {
        self.port = port
        self.call = call
    }

    /// The writer's format.
    public nonisolated var format: AudioFrameFormat { port.format }
    /// Frames the call got silence for because nothing was queued (after the first write).
    public nonisolated var underflows: Int { port.underflows }

    /// Audio queued and not yet taken by the bridge (whole frames, plus a partial frame
    /// kept for the next write).
    public var queuedDuration: Duration {
        let samples = port.queuedFrames * port.format.samplesPerFrame + pending.count
        return .microseconds(Int64(samples) * 1_000_000 / Int64(port.format.sampleRate))
    }

    /// Queues `samples` (mono, 16-bit, at the writer's sample rate). Whole frames go to the
    /// bridge's queue; a remainder waits for the next write or ``flush()``. Suspends while
    /// the queue is full.
    /// - Throws: ``PJSUAUsageError/unknownMediaPort`` once the writer is off the bridge (its
    ///   call ended, or it was stopped); `CancellationError` when the task is cancelled
    ///   while waiting for room (what was queued before stays queued).
    public func write(_ samples: some Sequence<Int16>) async throws {
        pending.append(contentsOf: samples)
        try await drain(padding: false)
    }

    /// Queues the partial frame left by earlier writes, padded with silence.
    /// - Throws: as ``write(_:)``.
    public func flush() async throws {
        try await drain(padding: true)
    }

    private func drain(padding: Bool) async throws {
        let size = port.format.samplesPerFrame
        if padding, !pending.isEmpty, pending.count % size != 0 {
            pending.append(contentsOf: repeatElement(0, count: size - pending.count % size))
        }
        // Frames sent are taken out of `pending` before every suspension: another write may
        // run on the actor while this one waits, and it must find only what is still unsent.
        var offset = 0
        defer { pending.removeFirst(offset) }
        while pending.count - offset >= size {
            guard !port.isRemoved else { throw PJSUAUsageError.unknownMediaPort }
            if port.write(pending[offset..<offset + size]) {
                offset += size
            } else {
                pending.removeFirst(offset)
                offset = 0
                try await Task.sleep(for: port.format.frameDuration)
            }
        }
        guard !port.isRemoved else { throw PJSUAUsageError.unknownMediaPort }
    }
}
