extension PJSUA {
    // MARK: Audio frames

    /// The audio `call` receives, as frames of PCM in `format`: see ``AudioFrameStream``
    /// for buffering, drops and when the sequence ends. The stream follows the call across
    /// re-INVITEs and hold; while the call receives nothing its frames are silence.
    ///
    /// Adds a port of the engine's to pjsua's conference bridge (`pjsua_conf_add_port`) and
    /// connects the call's audio to it (`pjsua_conf_connect`). Several streams of one call
    /// may run at once, each with its own format.
    /// - Parameters:
    ///   - call: a live call.
    ///   - format: sample rate and frame length; 16 kHz, 20 ms frames by default.
    ///   - buffer: how much audio waits for a slow reader before the oldest is dropped;
    ///     two frames to 10 s, 1 s by default.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``;
    ///   ``PJSUAUsageError/invalidArgument(_:)`` for an unsupported format or buffer;
    ///   ``PJSUAError`` when the bridge has no free slot.
    public func audioFrames(
        from call: Call, format: AudioFrameFormat = AudioFrameFormat(), buffer: Duration = .seconds(1)
    ) throws -> AudioFrameStream {
        let runtime = try runtime()
        _ = try liveSlot(call)
        try format.validate()
        let frames = try format.frames(in: buffer, what: "an audio frame stream's buffer")
        let port = try Native.attachFramePort(
            bridge: runtime.bridge, call: call, format: format, receiveFrames: frames, sendFrames: 0)
        try releaseIfEnded(call, runtime: runtime)
        return AudioFrameStream(port: port)
    }

    /// A writer that sends PCM in `format` into `call`: see ``AudioFrameWriter`` for
    /// backpressure and underflow. What the writer sends is mixed with any players of the
    /// call. Adds a port to pjsua's conference bridge (`pjsua_conf_add_port`) and connects
    /// it to the call (`pjsua_conf_connect`).
    /// - Parameters:
    ///   - call: a live call.
    ///   - format: sample rate and frame length; 16 kHz, 20 ms frames by default.
    ///   - buffer: how much audio the writer may queue ahead; two frames to 10 s, 1 s by
    ///     default.
    /// - Throws: as ``audioFrames(from:format:buffer:)``.
    public func audioFrameWriter(
        into call: Call, format: AudioFrameFormat = AudioFrameFormat(), buffer: Duration = .seconds(1)
    ) throws -> AudioFrameWriter {
        let runtime = try runtime()
        _ = try liveSlot(call)
        try format.validate()
        let frames = try format.frames(in: buffer, what: "an audio frame writer's buffer")
        let port = try Native.attachFramePort(
            bridge: runtime.bridge, call: call, format: format, receiveFrames: 0, sendFrames: frames)
        try releaseIfEnded(call, runtime: runtime)
        return AudioFrameWriter(port: port, call: call)
    }

    /// What the conference bridge sends to the sound device (conference slot 0), as frames
    /// of PCM in `format`: the mix a speaker would play (calls' received audio, tones and
    /// local ringback played to the sound device), before any device driver. See
    /// ``AudioFrameStream`` for buffering and drops. For servers and tests that have no
    /// sound hardware, and to check what a user would hear.
    ///
    /// Works with the null sound device (``SoundDevice/null``): the engine puts a port of
    /// its own in place of the null device's discarding port, in the master port that
    /// clocks the bridge (`pjmedia_master_port_set_uport` on pjsua's null device,
    /// `pjmedia_resample_run` to the stream's rate), so the frames are slot 0's mix
    /// exactly, one per bridge tick. While no device is attached
    /// (``SoundDeviceActivation/byApp`` before ``activateAudioDevice()``) the bridge is not
    /// clocked and no frames come; the stream resumes when the device is attached again.
    /// The sound device's input (slot 0's microphone) stays silence. One stream at a time;
    /// it ends when stopped (``stop(_:)-(AudioFrameStream)``) or at shutdown.
    /// - Parameters:
    ///   - format: sample rate and frame length; 16 kHz, 20 ms frames by default.
    ///   - buffer: how much audio waits for a slow reader before the oldest is dropped;
    ///     two frames to 10 s, 1 s by default.
    /// - Throws: ``PJSUAUsageError/invalidArgument(_:)`` for an unsupported format or
    ///   buffer, when the sound device is not ``SoundDevice/null``, or when another
    ///   sound-device stream runs; ``PJSUAUsageError`` when not running; ``PJSUAError`` when
    ///   memory runs out.
    public func soundDeviceFrames(
        format: AudioFrameFormat = AudioFrameFormat(), buffer: Duration = .seconds(1)
    ) throws -> AudioFrameStream {
        let runtime = try runtime()
        try format.validate()
        let frames = try format.frames(in: buffer, what: "a sound-device frame stream's buffer")
        guard runtime.configuration.media.soundDevice == .null else {
            throw PJSUAUsageError.invalidArgument(
                "sound-device frames need the null sound device; a real device plays the mix itself")
        }
        guard runtime.bridge.media.withLock({ $0.soundDeviceTap }) == nil else {
            throw PJSUAUsageError.invalidArgument("a sound-device frame stream is already running: stop it first")
        }
        let port = try Native.attachSoundDeviceTap(bridge: runtime.bridge, format: format, frames: frames)
        return AudioFrameStream(port: port)
    }

    /// Ends a frame stream before its call ends (or a sound-device stream): the reader gets
    /// the frames already buffered, then the end of the sequence. Wraps
    /// `pjsua_conf_remove_port` (for a sound-device stream, `pjmedia_master_port_set_uport`).
    /// - Throws: ``PJSUAUsageError/unknownMediaPort`` when it had already ended.
    public func stop(_ stream: AudioFrameStream) throws {
        guard Native.detach(bridge: try runtime().bridge, port: stream.port, of: stream.call) else {
            throw PJSUAUsageError.unknownMediaPort
        }
    }

    /// Takes a writer off its call before the call ends; audio still queued is discarded
    /// and later writes throw. Wraps `pjsua_conf_remove_port`.
    /// - Throws: ``PJSUAUsageError/unknownMediaPort`` when it was already off.
    public func stop(_ writer: AudioFrameWriter) throws {
        guard Native.detach(bridge: try runtime().bridge, port: writer.port, of: writer.call) else {
            throw PJSUAUsageError.unknownMediaPort
        }
    }
}
