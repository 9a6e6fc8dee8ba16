import CPJSUAShim

extension Native {
    // MARK: Jitter buffer and Opus

    /// Puts ``MediaConfiguration/jitterBuffer`` into the `jb_*` fields of the media config
    /// given to `pjsua_init` (milliseconds, -1 for pjmedia's stream default).
    static func applyJitterBuffer(_ settings: JitterBufferConfiguration, to media: inout pjsua_media_config) {
        media.jb_init = JitterBufferConfiguration.milliseconds(settings.initialPrefetch)
        media.jb_min_pre = JitterBufferConfiguration.milliseconds(settings.minimumPrefetch)
        media.jb_max_pre = JitterBufferConfiguration.milliseconds(settings.maximumPrefetch)
        media.jb_max = JitterBufferConfiguration.milliseconds(settings.capacity)
        media.jb_discard_algo =
            switch settings.discard {
            case .none: PJMEDIA_JB_DISCARD_NONE
            case .fixedRate: PJMEDIA_JB_DISCARD_STATIC
            case .progressive: PJMEDIA_JB_DISCARD_PROGRESSIVE
            }
    }

    /// Whether the linked pjmedia has the Opus codec.
    static var hasOpus: Bool { cpj_opus_available() != 0 }

    /// Sets the Opus encoder's defaults for later calls (`pjmedia_codec_opus_set_default_param`).
    static func configureOpus(_ settings: OpusConfiguration) throws(PJSUAError) {
        let status = cpj_opus_configure(
            UInt32(settings.bitrate ?? 0), UInt32(settings.complexity), UInt32(settings.packetMilliseconds),
            settings.discontinuousTransmission ? 1 : 0, settings.inBandFEC ? 1 : 0,
            UInt32(settings.expectedPacketLoss))
        try PJ.check(status, "pjmedia_codec_opus_set_default_param")
    }
}
