extension PJSUA {
    // MARK: Tones

    /// Plays `tones` into a call (the far end hears them, mixed with anything else the call
    /// sends), once or over and over. The link is kept across media changes; the generator
    /// is removed when the call ends or by ``stop(_:)-(TonePlayer)``. A sequence played once
    /// leaves silence when it ends, and its generator is removed within a second after (it
    /// would otherwise hold a conference slot, which calls need too, until the call ends).
    ///
    /// Wraps `pjmedia_tonegen_create`, `pjmedia_tonegen_play`, `pjsua_conf_add_port` and
    /// `pjsua_conf_connect`. See ``Tone`` for call-progress presets and DTMF tones (as audio;
    /// to signal digits to the peer use ``sendDTMF(_:digits:method:duration:)``).
    /// - Parameters:
    ///   - tones: 1 to 32 tones (`PJMEDIA_TONEGEN_MAX_DIGITS`).
    ///   - call: a live call.
    ///   - loop: start over after the last tone.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``;
    ///   ``PJSUAUsageError/invalidArgument(_:)`` for an empty, too long or invalid
    ///   sequence; ``PJSUAError`` when the bridge has no free slot.
    @discardableResult
    public func playTones(_ tones: [Tone], into call: Call, loop: Bool = false) throws -> TonePlayer {
        let runtime = try runtime()
        _ = try liveSlot(call)
        try tones.validate()
        let player = try Native.attachTones(bridge: runtime.bridge, call: call, tones: tones, loop: loop)
        try releaseIfEnded(call, runtime: runtime)
        return player
    }

    /// Plays `tones` to the local sound device (a busy tone after a rejected call; outgoing
    /// calls' ringback plays by itself, see ``MediaConfiguration/localRingback``), once
    /// (removed within a second after the end) or over and over, until
    /// ``stop(_:)-(TonePlayer)`` or shutdown.
    /// Wraps the same pjmedia calls as ``playTones(_:into:loop:)``, connecting to the sound
    /// device's conference slot (0).
    /// - Throws: as ``playTones(_:into:loop:)``, less the unknown call.
    @discardableResult
    public func playTonesToSoundDevice(_ tones: [Tone], loop: Bool = false) throws -> TonePlayer {
        let runtime = try runtime()
        try tones.validate()
        return try Native.attachTones(bridge: runtime.bridge, call: nil, tones: tones, loop: loop)
    }

    /// Stops tones and removes their generator. Wraps `pjsua_conf_remove_port`.
    /// - Throws: ``PJSUAUsageError/unknownMediaPort`` when they were already stopped (or
    ///   their call ended, or, played once, they finished and were removed).
    public func stop(_ tones: TonePlayer) throws {
        guard Native.detach(bridge: try runtime().bridge, port: tones.port, of: tones.call) else {
            throw PJSUAUsageError.unknownMediaPort
        }
    }
}
