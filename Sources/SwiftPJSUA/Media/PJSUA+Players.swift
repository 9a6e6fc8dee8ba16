extension PJSUA {
    // MARK: Players and recorders

    /// Plays a WAV file into a call: the far end hears it. The link is kept across media
    /// changes and the player is destroyed when the call ends.
    ///
    /// Holding does not stop it: a call we hold (``MediaStatus/localHold``, a `sendonly`
    /// stream, RFC 3264 §8.4) still sends, so the far end goes on hearing the file, as it
    /// would hear music on hold; only an `inactive` stream sends nothing. To silence the
    /// file while holding, ``stop(_:)-(Player)`` it before ``setHold(_:)`` (or at the
    /// ``PJSUAEvent/callMediaState(_:)`` event that reports ``MediaStatus/localHold``), and
    /// play it again on resume, as `swiftpjsua` does.
    ///
    /// By default the file plays once and a ``PJSUAEvent/playbackFinished(_:)`` event
    /// follows when it has played to the end; with `loop: true` it starts over at the end
    /// and never finishes (stop it with ``stop(_:)-(Player)`` or end the call).
    /// Wraps `pjsua_player_create`, `pjmedia_wav_player_set_eof_cb2` and `pjsua_conf_connect`.
    /// - Parameters:
    ///   - file: path of a 16-bit PCM WAV file.
    ///   - call: the call to play into.
    ///   - loop: start over at the end of the file; `false` by default.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAError`` when the file cannot be
    ///   opened or is not a supported WAV file.
    @discardableResult
    public func play(file: String, into call: Call, loop: Bool = false) throws -> Player {
        let runtime = try runtime()
        _ = try liveSlot(call)
        let player = try Native.attachPlayer(bridge: runtime.bridge, call: call, file: file, loop: loop)
        try releaseIfEnded(call, runtime: runtime)
        return player
    }

    /// Records the audio a call receives into a WAV file (16-bit PCM at the bridge's clock
    /// rate, mono). The file is complete once `stop(_:)` returns. When the call
    /// ends with the recorder still attached, the engine closes it on its own thread right
    /// after the call's ``CallState/disconnected`` event, so a file read at that event may be
    /// incomplete: stop the recorder first to read it at once.
    /// Wraps `pjsua_recorder_create` and `pjsua_conf_connect`.
    /// - Parameters:
    ///   - file: path of the WAV file to write; an existing file is replaced.
    ///   - call: the call whose received audio is recorded.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAError`` when the file cannot be
    ///   created.
    @discardableResult
    public func record(file: String, from call: Call) throws -> Recorder {
        let runtime = try runtime()
        _ = try liveSlot(call)
        let recorder = try Native.attachRecorder(bridge: runtime.bridge, call: call, file: file)
        try releaseIfEnded(call, runtime: runtime)
        return recorder
    }

    /// Media attached while the call was ending (its end callback may have run first, and
    /// then found nothing to release) is released at once, and the call reported unknown.
    func releaseIfEnded(_ call: Call, runtime: Runtime) throws {
        if runtime.bridge.hub.hasEnded(call) {
            Native.releaseMedia(bridge: runtime.bridge, of: call)
            throw PJSUAUsageError.unknownCall(call)
        }
    }

    /// Stops and destroys a player before its call ends, returning once pjmedia has closed
    /// the file. Wraps `pjsua_player_destroy`.
    ///
    /// From pjproject 2.15 on the conference bridge removes ports on its clock thread, one
    /// tick (20 ms) later; this waits for that on the engine thread, for at most 1 s, and
    /// runs the bridge's clock itself when no sound device drives it.
    /// - Throws: ``PJSUAUsageError/unknownMediaPort`` when it was already destroyed;
    ///   ``PJSUAError`` with ``PJSUAError/Code/timedOut`` when pjmedia had not closed it
    ///   after 1 s (it is detached all the same, and closed when the bridge next runs).
    public func stop(_ player: Player) throws {
        guard try Native.detach(bridge: try runtime().bridge, player: player, recorder: nil) else {
            throw PJSUAUsageError.unknownMediaPort
        }
    }

    /// Stops a recorder before its call ends, returning once its WAV file is complete on
    /// disk (closed by pjmedia). Wraps `pjsua_recorder_destroy`.
    ///
    /// From pjproject 2.15 on the conference bridge removes ports on its clock thread, one
    /// tick (20 ms) later; this waits for that on the engine thread, for at most 1 s, and
    /// runs the bridge's clock itself when no sound device drives it.
    /// - Throws: ``PJSUAUsageError/unknownMediaPort`` when it was already closed;
    ///   ``PJSUAError`` with ``PJSUAError/Code/timedOut`` when pjmedia had not closed the
    ///   file after 1 s (it is detached all the same, and closed when the bridge next runs).
    public func stop(_ recorder: Recorder) throws {
        guard try Native.detach(bridge: try runtime().bridge, player: nil, recorder: recorder) else {
            throw PJSUAUsageError.unknownMediaPort
        }
    }
}
