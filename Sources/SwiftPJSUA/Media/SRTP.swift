/// Encrypted media for an account's calls: SRTP (RFC 3711) keyed by SDES (RFC 4568, keys in
/// the SDP's `a=crypto` lines) or by DTLS-SRTP (RFC 5763/5764, a DTLS handshake on the media
/// path, checked against the SDP's `a=fingerprint`).
///
/// Set it on ``AccountConfiguration/srtp`` (or pass it to
/// ``PJSUA/addLocalAccount(on:isDefault:mediaInactivityTimeout:transportLossPolicy:srtp:)``).
/// It governs both directions: the offers the account's calls make, and which incoming
/// offers it accepts. An incoming offer is negotiated when the INVITE arrives, before the
/// app sees the call, so the account's setting is what decides it.
///
/// <!-- snippet-setup:
/// let engine = PJSUA()
/// -->
/// ```swift
/// var account = AccountConfiguration(identity: "sip:alice@example.com", registrar: "sip:example.com")
/// account.srtp = .mandatory(keying: [.sdes])
/// account.srtp.secureSignaling = .tls
/// let handle = try await engine.addAccount(account)
/// let call = try await engine.call("sip:bob@example.com", from: handle)
/// if let srtp = try await engine.callInfo(call).media.first?.srtp {
///     print(srtp.cryptoSuite ?? "handshaking", srtp.keying as Any)
/// }
/// ```
///
/// The negotiated suite and keying of each stream are in ``MediaStream/srtp``, in
/// ``CallInfo/media`` and in every ``CallMediaChange``. Wraps `pjsua_acc_config`'s
/// `use_srtp`, `srtp_secure_signaling` and `srtp_opt` (`keying`, `crypto`).
public struct SRTPConfiguration: Sendable, Hashable {
    /// Whether calls use SRTP (`pjmedia_srtp_use`).
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// Plain RTP only. Offers are `RTP/AVP`; an incoming `RTP/SAVP` offer is refused
        /// with 488 Not Acceptable Here. pjsua's default.
        case disabled
        /// SRTP when the far end takes it, plain RTP otherwise. Offers are `RTP/AVP` with
        /// the keying attributes added (best-effort SRTP), so a plain peer answers them as
        /// plain RTP; incoming `RTP/AVP` and `RTP/SAVP` offers are both accepted.
        case optional
        /// SRTP or no call. Offers are `RTP/SAVP` (`UDP/TLS/RTP/SAVP` with DTLS-SRTP first);
        /// an incoming offer without SRTP is refused with 488 Not Acceptable Here, and a
        /// call whose answer has no SRTP ends (see ``SRTPConfiguration``'s article).
        case mandatory
    }

    /// How the SRTP keys are agreed (`pjmedia_srtp_keying_method`).
    public enum Keying: String, Sendable, Hashable, CaseIterable {
        /// SDES (RFC 4568): the keys travel in the SDP's `a=crypto` lines, so they are only as
        /// secret as the signalling; pair it with ``SecureSignaling/tls``.
        case sdes
        /// DTLS-SRTP (RFC 5763/5764): a DTLS handshake on the media ports derives the keys;
        /// the SDP carries only the certificate's `a=fingerprint`. Needs a pjproject built
        /// with `PJMEDIA_SRTP_HAS_DTLS` (see ``SRTPConfiguration/availableKeying``).
        case dtlsSRTP = "dtls"
    }

    /// Which signalling SRTP requires (`srtp_secure_signaling`): SDES keys sent over plain
    /// UDP can be read by anyone on the path.
    public enum SecureSignaling: Int, Sendable, Hashable, CaseIterable {
        /// SRTP over any transport (the engine's default; pjsua's own default is ``tls``).
        case notRequired = 0
        /// SRTP only when the hop to the next SIP server is TLS; otherwise the call fails: an
        /// incoming INVITE is answered 406 Not Acceptable, and placing a call throws
        /// ``PJSUAError`` with ``PJSUAError/Code/insecureSession`` before any INVITE is sent.
        case tls = 1
        /// SRTP only for `sips:` requests (TLS end to end).
        case sipsEndToEnd = 2
    }

    /// Whether calls use SRTP; ``Mode/disabled`` by default.
    public var mode: Mode
    /// The keying methods to offer and accept, most preferred first; at least one, no
    /// repeats. When both are given, offers carry both (`a=crypto` and `a=fingerprint`).
    public var keying: [Keying]
    /// The crypto suites to offer and accept, most preferred first, by their RFC 4568
    /// names, for example `AES_CM_128_HMAC_SHA1_80`; empty (the default) for every suite
    /// pjmedia has (``availableCryptoSuites``). At most 16.
    public var cryptoSuites: [String]
    /// Which signalling SRTP requires; ``SecureSignaling/notRequired`` by default.
    public var secureSignaling: SecureSignaling

    /// Creates an SRTP configuration.
    /// - Parameters:
    ///   - mode: disabled, optional or mandatory.
    ///   - keying: the keying methods, most preferred first (default SDES alone).
    ///   - cryptoSuites: suite names, most preferred first; empty for pjmedia's list.
    ///   - secureSignaling: the signalling SRTP requires (default none).
    public init(
        mode: Mode = .disabled, keying: [Keying] = [.sdes], cryptoSuites: [String] = [],
        secureSignaling: SecureSignaling = .notRequired
    ) {
        self.mode = mode
        self.keying = keying
        self.cryptoSuites = cryptoSuites
        self.secureSignaling = secureSignaling
    }

    /// Plain RTP only (the default).
    public static let disabled = SRTPConfiguration(mode: .disabled)

    /// SRTP when the far end takes it, with `keying` in that order (SDES by default).
    public static func optional(keying: [Keying] = [.sdes]) -> SRTPConfiguration {
        SRTPConfiguration(mode: .optional, keying: keying)
    }

    /// SRTP or no call, with `keying` in that order (SDES by default).
    public static func mandatory(keying: [Keying] = [.sdes]) -> SRTPConfiguration {
        SRTPConfiguration(mode: .mandatory, keying: keying)
    }

    /// The keying methods the linked pjproject has: SDES always, DTLS-SRTP when it was
    /// built with `PJMEDIA_SRTP_HAS_DTLS` (swift-pjsua's provisioned builds are).
    public static var availableKeying: [Keying] { SRTPSupport.availableKeying }

    /// The crypto suites the linked pjmedia knows, in its order of preference, for example
    /// `AES_CM_128_HMAC_SHA1_80`.
    public static var availableCryptoSuites: [String] { SRTPSupport.availableCryptoSuites }
}

extension SRTPConfiguration: Validatable {
    /// Throws ``PJSUAUsageError/invalidConfiguration(_:)`` for an empty or repeating keying
    /// list, a keying this pjproject lacks, or an unknown or repeated suite.
    func validate() throws(PJSUAUsageError) {
        guard !keying.isEmpty, Set(keying).count == keying.count else {
            throw .invalidConfiguration("srtp.keying must list sdes and/or dtls, each once")
        }
        let available = Self.availableKeying
        if let missing = keying.first(where: { !available.contains($0) }) {
            throw .invalidConfiguration(
                "srtp.keying \(missing.rawValue): this pjproject was built without it (PJMEDIA_SRTP_HAS_DTLS)")
        }
        let suites = Self.availableCryptoSuites
        guard cryptoSuites.count <= 16, Set(cryptoSuites).count == cryptoSuites.count else {
            throw .invalidConfiguration("srtp.cryptoSuites: at most 16, each once")
        }
        if let unknown = cryptoSuites.first(where: { !suites.contains($0) }) {
            throw .invalidConfiguration(
                "srtp.cryptoSuites: unknown suite \(unknown) (known: \(suites.joined(separator: ", ")))")
        }
    }
}

/// The SRTP session of one negotiated media stream: what ``MediaStream/srtp`` reports.
///
/// With SDES the keys are in the SDP, so the session is up when the media event reports
/// the stream. With DTLS-SRTP the ``PJSUAEvent/callMediaState(_:)`` event comes when the SDP
/// is negotiated, before the handshake on the media path has ended: ``cryptoSuite`` is then
/// `nil`, and a later ``PJSUA/callInfo(_:)`` has it (pjsua reports no media event when the
/// handshake ends; a failed handshake is reported as a media event with the stream in
/// ``MediaStatus/error``).
public struct SRTPSession: Sendable, Hashable {
    /// The crypto suite the stream sends with, for example `AES_CM_128_HMAC_SHA1_80`
    /// (`pjmedia_srtp_info.tx_policy.name`); `nil` while a DTLS-SRTP handshake is still
    /// running.
    public var cryptoSuite: String?
    /// How the keys were agreed, read from the negotiated SDP; `nil` when the engine could
    /// not tell (a snapshot taken before the call's first media event).
    public var keying: SRTPConfiguration.Keying?

    /// Whether the session is keyed and protecting the stream (a ``cryptoSuite`` is known).
    public var isActive: Bool { cryptoSuite != nil }

    /// Creates the value; the engine fills it from `pjsua_call_get_med_transport_info`.
    public init(cryptoSuite: String?, keying: SRTPConfiguration.Keying?) {
        self.cryptoSuite = cryptoSuite
        self.keying = keying
    }
}
