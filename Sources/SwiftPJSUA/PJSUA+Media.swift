extension PJSUA {
    // MARK: Media

    /// Plays a WAV file into a call: the far end hears it. The link is kept across media
    /// changes and the player is destroyed when the call ends.
    /// Wraps `pjsua_player_create` and `pjsua_conf_connect`.
    /// - Parameters:
    ///   - file: path of a 16-bit PCM WAV file.
    ///   - call: the call to play into.
    ///   - loop: start over at the end of the file.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAError`` when the file cannot be
    ///   opened or is not a supported WAV file.
    @discardableResult
    public func play(file: String, into call: Call, loop: Bool = true) throws -> Player {
        let runtime = try runtime()
        _ = try liveSlot(call)
        let player = try Native.attachPlayer(bridge: runtime.bridge, call: call, file: file, loop: loop)
        if runtime.bridge.hub.hasEnded(call) {
            Native.releaseMedia(bridge: runtime.bridge, of: call)
            throw PJSUAUsageError.unknownCall(call)
        }
        return player
    }

    /// Records the audio a call receives into a WAV file (16-bit PCM at the bridge's clock
    /// rate, mono). The file is closed when the call ends or the recorder is stopped.
    /// Wraps `pjsua_recorder_create` and `pjsua_conf_connect`.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAError`` when the file cannot be
    ///   created.
    @discardableResult
    public func record(_ call: Call, to file: String) throws -> Recorder {
        let runtime = try runtime()
        _ = try liveSlot(call)
        let recorder = try Native.attachRecorder(bridge: runtime.bridge, call: call, file: file)
        if runtime.bridge.hub.hasEnded(call) {
            Native.releaseMedia(bridge: runtime.bridge, of: call)
            throw PJSUAUsageError.unknownCall(call)
        }
        return recorder
    }

    /// Stops and destroys a player before its call ends. Wraps `pjsua_player_destroy`.
    /// - Throws: ``PJSUAUsageError/unknownMediaPort`` when it was already destroyed.
    public func stop(_ player: Player) throws {
        guard Native.detach(bridge: try runtime().bridge, player: player, recorder: nil) else {
            throw PJSUAUsageError.unknownMediaPort
        }
    }

    /// Stops a recorder and closes its file before its call ends. Wraps `pjsua_recorder_destroy`.
    /// - Throws: ``PJSUAUsageError/unknownMediaPort`` when it was already closed.
    public func stop(_ recorder: Recorder) throws {
        guard Native.detach(bridge: try runtime().bridge, player: nil, recorder: recorder) else {
            throw PJSUAUsageError.unknownMediaPort
        }
    }

    /// Attaches the configured sound device to the conference bridge (for example when the
    /// system's audio session becomes active). Wraps `pjsua_set_null_snd_dev` or
    /// `pjsua_set_snd_dev`.
    /// - Throws: ``PJSUAUsageError`` when not running; ``PJSUAError`` when the device cannot
    ///   be opened.
    public func activateAudioDevice() throws {
        let runtime = try runtime()
        try Native.attachSoundDevice(runtime.configuration.media.soundDevice)
    }

    /// Detaches the sound device; no audio flows through the bridge until it is activated
    /// again. Wraps `pjsua_set_no_snd_dev`.
    /// - Throws: ``PJSUAUsageError`` when not running.
    public func deactivateAudioDevice() throws {
        _ = try runtime()
        Native.detachSoundDevice()
    }
}
