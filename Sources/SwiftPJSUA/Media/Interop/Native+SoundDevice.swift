import CPJSUAShim

extension Native {
    // MARK: Sound device

    static func attachSoundDevice(_ device: SoundDevice) throws(PJSUAError) {
        switch device {
        case .null:
            try PJ.check(pjsua_set_null_snd_dev(), "pjsua_set_null_snd_dev")
        case .systemDefault:
            // A user who never chose a device gets this one: say which option fits a machine
            // without audio hardware instead of only pjmedia's text.
            try PJ.check(
                pjsua_set_snd_dev(PJMEDIA_AUD_DEFAULT_CAPTURE_DEV, PJMEDIA_AUD_DEFAULT_PLAYBACK_DEV),
                "pjsua_set_snd_dev", subject: SoundDevice.systemDefaultFailureHint)
        }
    }

    static func detachSoundDevice() {
        _ = pjsua_set_no_snd_dev()
    }
}

extension SoundDevice {
    /// Appended to the error when the system's default device cannot be opened.
    static let systemDefaultFailureHint =
        "the system's default sound device (MediaConfiguration.soundDevice = .systemDefault, the default) "
        + "could not be opened; on a server or a machine without audio hardware set "
        + "MediaConfiguration.soundDevice = .null"
}

extension PJSUAError.Code {
    /// `PJMEDIA_EAUD_NODEFDEV`: the system has no default sound device (a machine without
    /// audio hardware); ``PJSUA/start(_:)`` throws it with ``SoundDevice/systemDefault``.
    public static var noDefaultSoundDevice: Self { .init(rawValue: cpj_status_aud_nodefdev()) }
}
