/// Which sound device the conference bridge uses when audio is active.
public enum SoundDevice: Sendable, Hashable {
    /// No hardware: a null device clocks the bridge (`pjsua_set_null_snd_dev`), from start to
    /// shutdown (no idle auto-close). For servers, tests and machines without audio
    /// hardware; ``PJSUA/soundDeviceFrames(format:buffer:)`` shows what it would play.
    case null
    /// The system's default capture and playback devices (`pjsua_set_snd_dev`), the
    /// default. On a machine with no default device, attaching it (at ``PJSUA/start(_:)``,
    /// or at ``PJSUA/activateAudioDevice()`` with ``SoundDeviceActivation/byApp``) throws
    /// ``PJSUAError`` with code ``PJSUAError/Code/noDefaultSoundDevice`` and a message that
    /// names ``null``, rather than running calls with no audio.
    case systemDefault
}

/// When the sound device is attached to the conference bridge.
public enum SoundDeviceActivation: Sendable, Hashable {
    /// From `start` until `shutdown`.
    case automatic
    /// Only between ``PJSUA/activateAudioDevice()`` and ``PJSUA/deactivateAudioDevice()``;
    /// no device at all otherwise (`pjsua_set_no_snd_dev`). For apps whose audio session
    /// is owned by the system (CallKit's `didActivate`/`didDeactivate`): while no device
    /// is attached the bridge is not clocked and no audio flows.
    case byApp
}

/// Media settings of the engine.
public struct MediaConfiguration: Sendable, Hashable {
    /// The sound device.
    public var soundDevice: SoundDevice
    /// When the sound device is attached.
    public var soundDeviceActivation: SoundDeviceActivation
    /// The conference bridge's sampling rate in Hz (8000, 16000, 32000 or 48000).
    public var clockRate: Int
    /// Voice activity detection (silence suppression) on sent audio.
    public var voiceActivityDetection: Bool
    /// Local UDP ports for RTP and RTCP; each audio stream takes two consecutive ports.
    ///
    /// Each account starts looking for a free pair at a random even port of the range (not
    /// at its lower bound), so that two engines on one host, or another program holding the
    /// first ports, do not make calls fail with "Address already in use": pjsua tries 100
    /// pairs upwards from the start, wrapping within the range. On pjproject 2.13+ pjsua
    /// picks the start (`pjsua_transport_config.randomize_port`); on 2.12 the engine does.
    public var rtpPorts: ClosedRange<UInt16>
    /// The address RTP binds to and advertises in SDP (`c=`); `nil` uses the bind address
    /// of the account's SIP transport, or every interface when that has none.
    public var rtpAddress: String?
    /// The address to advertise in SDP for RTP instead of the bound one (1:1 NAT); `nil`
    /// uses the ``TransportConfiguration/publicAddress`` of the account's transport, else
    /// the RTP address itself. Wraps `pjsua_acc_config.rtp_cfg.public_addr`.
    public var rtpPublicAddress: String?
    /// Local ringback: the tones the engine plays to the sound device (conference slot 0)
    /// while an outgoing call is alerting without early media, looped; `nil` plays none.
    ///
    /// An outgoing call rings from the 180 Ringing of its early dialog (RFC 3960 §2: the
    /// UAC generates ringback itself when the callee sends no early media) until it is
    /// answered (``CallState/connecting`` or ``CallState/confirmed``), ends, or gets early
    /// media: an active audio stream, from a 183 Session Progress (or any 18x) with SDP,
    /// whose audio the sound device then plays instead. Should early media stop being
    /// active while the call is still early (the peer's UPDATE puts it on hold or inactive),
    /// the ringback comes back. Every ringing call shares one tone generator: it starts
    /// when the first call rings and is taken off the bridge when the last one stops (or at
    /// shutdown), so it holds one conference slot at most.
    ///
    /// The default is ``Tone/ringbackEurope`` (425 Hz, 1 s on, 4 s off): 400–450 Hz single
    /// tones are the ringback of most of the world's networks (ITU-T E.180 recommends
    /// that band), where 440 + 480 Hz (``Tone/ringbackNorthAmerica``) is North America's.
    /// Set `nil` when the app plays its own ringback or has no listener (a server). CallKit
    /// plays none (it shows the call's progress only), so a CallKit app keeps this one. Checked at ``PJSUA/start(_:)``
    /// (``PJSUAUsageError/invalidConfiguration(_:)``: 1 to 32 valid tones). Played with
    /// `pjmedia_tonegen_create`, `pjmedia_tonegen_play`, `pjsua_conf_add_port` and
    /// `pjsua_conf_connect` to slot 0, removed with `pjsua_conf_remove_port`.
    public var localRingback: [Tone]?
    /// The audio codecs to offer first, most preferred first, as codec ids or their prefixes
    /// matched without regard to case (`opus`, `G722`, `PCMU/8000`; see ``PJSUA/codecs()``).
    ///
    /// Set at ``PJSUA/start(_:)`` with `pjsua_codec_set_priority`: the codecs listed get
    /// priorities 240, 239, … in this order (a prefix matching several codecs keeps
    /// pjmedia's order among them; listing a codec enables it), every other enabled codec
    /// keeps pjmedia's order below them (128 and down). An offer lists codecs in that
    /// order; an answer to a peer's offer follows the peer's order (pjmedia's default), so
    /// the codec of an incoming call is the first of the caller's that this list enables.
    /// ``PJSUA/setCodecPriority(_:_:)`` still changes single codecs afterwards (a priority
    /// of 241–255 puts a codec above this whole list).
    ///
    /// The default, ``defaultCodecOrder``, is opus, G.722, PCMU, PCMA; codecs of it that
    /// the pjproject build lacks are skipped. An empty list keeps pjmedia's own order
    /// (speex/16000, speex/8000, speex/32000, GSM, PCMU, PCMA, G.722, opus…). ``PJSUA/start(_:)``
    /// throws ``PJSUAUsageError/invalidConfiguration(_:)`` for an empty or repeated entry,
    /// one with a space or control character, more than 32 entries, or an entry of a list
    /// other than the default that matches no codec of the build.
    public var codecOrder: [String]
    /// ICE for calls' audio (``ICEConfiguration``); off by default. Accounts follow it
    /// unless ``AccountConfiguration/ice`` says otherwise.
    public var ice: ICEConfiguration = ICEConfiguration()
    /// The TURN server for ICE's relayed candidates (``TURNConfiguration``); `nil`, the
    /// default, for none. Accounts follow it unless ``AccountConfiguration/turn`` says otherwise.
    public var turn: TURNConfiguration?
    /// Every call's receive jitter buffer (``JitterBufferConfiguration``); by default
    /// ``JitterBufferConfiguration/adaptive``, pjmedia's own adaptive prefetch.
    public var jitterBuffer: JitterBufferConfiguration = .adaptive
    /// The Opus codec's encoder settings (``OpusConfiguration``); `nil`, the default,
    /// leaves pjmedia's, which equal `OpusConfiguration()`. On a pjproject built without
    /// Opus (the iOS-like profile), a value here makes ``PJSUA/start(_:)`` throw
    /// ``PJSUAUsageError/invalidConfiguration(_:)`` rather than be silently ignored.
    public var opus: OpusConfiguration?

    /// The codec order a user expects: Opus (wideband, loss-resilient), G.722 (wideband),
    /// then G.711 µ-law and A-law (narrowband, understood by every SIP device).
    public static let defaultCodecOrder = ["opus", "G722", "PCMU", "PCMA"]

    /// Creates media settings (the system's default sound device, 16 kHz, no VAD, RTP ports
    /// 4000–9999, European local ringback, opus first by default). Servers, tests and
    /// machines without audio hardware pass `soundDevice: .null`.
    public init(
        soundDevice: SoundDevice = .systemDefault,
        soundDeviceActivation: SoundDeviceActivation = .automatic,
        clockRate: Int = 16000,
        voiceActivityDetection: Bool = false,
        rtpPorts: ClosedRange<UInt16> = 4000...9999,
        rtpAddress: String? = nil,
        localRingback: [Tone]? = Tone.ringbackEurope,
        codecOrder: [String] = MediaConfiguration.defaultCodecOrder
    ) {
        self.localRingback = localRingback
        self.codecOrder = codecOrder
        self.soundDevice = soundDevice
        self.soundDeviceActivation = soundDeviceActivation
        self.clockRate = clockRate
        self.voiceActivityDetection = voiceActivityDetection
        self.rtpPorts = rtpPorts
        self.rtpAddress = rtpAddress
    }
}

extension MediaConfiguration: Validatable {
    func validate() throws(PJSUAUsageError) {
        try HostPort.validateAddress(rtpPublicAddress)
        try HostPort.validateAddress(rtpAddress)
        guard [8000, 16000, 32000, 44100, 48000].contains(clockRate) else {
            throw .invalidConfiguration("clockRate must be 8000, 16000, 32000, 44100 or 48000 Hz")
        }
        if let localRingback {
            do { try localRingback.validate() } catch {
                throw .invalidConfiguration("localRingback: \(error.description)")
            }
        }
        try CodecOrder.validate(codecOrder)
        guard rtpPorts.count >= 2 else {
            throw .invalidConfiguration("rtpPorts must hold at least two ports")
        }
        try ice.validate()
        try turn?.validate()
        try jitterBuffer.validate()
        try opus?.validate()
    }
}
