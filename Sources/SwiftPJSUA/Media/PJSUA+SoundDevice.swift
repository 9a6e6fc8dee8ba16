extension PJSUA {
    // MARK: Sound device

    /// Attaches the configured sound device to the conference bridge (for example when the
    /// system's audio session becomes active). Wraps `pjsua_set_null_snd_dev` or
    /// `pjsua_set_snd_dev`.
    /// - Throws: ``PJSUAUsageError`` when not running; ``PJSUAError`` when the device cannot
    ///   be opened.
    public func activateAudioDevice() throws {
        let runtime = try runtime()
        try Native.attachSoundDevice(runtime.configuration.media.soundDevice)
        Native.reinstallSoundDeviceTap(bridge: runtime.bridge)
    }

    /// Detaches the sound device; no audio flows through the bridge until it is activated
    /// again. Does nothing when the engine is not running: no device is attached then.
    /// Wraps `pjsua_set_no_snd_dev`.
    public func deactivateAudioDevice() {
        guard isRunning else { return }
        Native.detachSoundDevice()
    }
}
