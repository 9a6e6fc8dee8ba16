// The names this package used before its vocabulary was made one: status fields are
// `statusCode` and `reason` in every payload and info struct (as in ``RegistrationChange``),
// methods are named for what they return, and a call's media is paired with `into:` (what
// goes to the call) and `from:` (what comes from it). The old names stay, deprecated, for
// one minor release.

extension CallStateChange {
    /// The last SIP status code: ``statusCode``.
    @available(*, deprecated, renamed: "statusCode")
    public var lastStatus: Int {
        get { statusCode }
        set { statusCode = newValue }
    }

    /// Creates the payload: ``init(call:state:sipCallID:statusCode:reason:)``.
    @available(*, deprecated, renamed: "init(call:state:sipCallID:statusCode:reason:)")
    public init(call: Call, state: CallState, sipCallID: String, lastStatus: Int, reason: String) {
        self.init(call: call, state: state, sipCallID: sipCallID, statusCode: lastStatus, reason: reason)
    }
}

extension CallInfo {
    /// The last SIP status code of the INVITE session: ``statusCode``.
    @available(*, deprecated, renamed: "statusCode")
    public var lastStatusCode: Int {
        get { statusCode }
        set { statusCode = newValue }
    }

    /// The reason phrase of ``statusCode``: ``reason``.
    @available(*, deprecated, renamed: "reason")
    public var lastReason: String {
        get { reason }
        set { reason = newValue }
    }
}

extension PJSUA {
    /// Periodic statistics of a call: ``streamStatistics(of:every:)``.
    @available(*, deprecated, renamed: "streamStatistics(of:every:)")
    public nonisolated func quality(of call: Call, every interval: Duration = .seconds(1)) -> AsyncStream<
        StreamStatistics
    > {
        streamStatistics(of: call, every: interval)
    }

    /// Records a call's received audio: ``record(file:from:)``.
    // A message, not `renamed:`: the rename's fix-it would only relabel the arguments, and the
    // new method takes the file first.
    @available(*, deprecated, message: "use record(file:from:), which takes the file first")
    @discardableResult
    public func record(_ call: Call, to file: String) throws -> Recorder {
        try record(file: file, from: call)
    }

    /// The audio a call receives: ``audioFrames(from:format:buffer:)``.
    @available(*, deprecated, renamed: "audioFrames(from:format:buffer:)")
    public func audioFrames(
        of call: Call, format: AudioFrameFormat = AudioFrameFormat(), buffer: Duration = .seconds(1)
    ) throws -> AudioFrameStream {
        try audioFrames(from: call, format: format, buffer: buffer)
    }

    /// A writer of audio into a call: ``audioFrameWriter(into:format:buffer:)``.
    @available(*, deprecated, renamed: "audioFrameWriter(into:format:buffer:)")
    public func audioFrameWriter(
        for call: Call, format: AudioFrameFormat = AudioFrameFormat(), buffer: Duration = .seconds(1)
    ) throws -> AudioFrameWriter {
        try audioFrameWriter(into: call, format: format, buffer: buffer)
    }
}
