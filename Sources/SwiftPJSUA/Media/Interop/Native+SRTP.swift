import CPJSUAShim

/// What the linked pjmedia offers for SRTP, for ``SRTPConfiguration``'s static properties.
enum SRTPSupport {
    static var availableKeying: [SRTPConfiguration.Keying] {
        var keying: [SRTPConfiguration.Keying] = []
        if cpj_srtp_has_keying(PJMEDIA_SRTP_KEYING_SDES) != 0 { keying.append(.sdes) }
        if cpj_srtp_has_keying(PJMEDIA_SRTP_KEYING_DTLS_SRTP) != 0 { keying.append(.dtlsSRTP) }
        return keying
    }

    static var availableCryptoSuites: [String] {
        (0..<cpj_srtp_crypto_count()).map { PJ.string(cpj_srtp_crypto_name($0)) }.filter { !$0.isEmpty }
    }
}

/// The keying a call's streams negotiated (``MediaState/negotiatedKeying``): by stream index,
/// read for the call with `generation`.
struct NegotiatedKeying: Sendable {
    var generation: UInt64
    var keying: [Int: SRTPConfiguration.Keying]
}

extension Native {
    // MARK: SRTP

    /// Puts `srtp` into an account configuration; the suite names live in `scope`
    /// (`pjsua_acc_add` and `pjsua_acc_modify` copy them).
    static func applySRTP(_ srtp: SRTPConfiguration, to config: inout pjsua_acc_config, scope: StringScope) {
        let use: pjmedia_srtp_use =
            switch srtp.mode {
            case .disabled: PJMEDIA_SRTP_DISABLED
            case .optional: PJMEDIA_SRTP_OPTIONAL
            case .mandatory: PJMEDIA_SRTP_MANDATORY
            }
        let keying = srtp.keying.map { $0 == .sdes ? PJMEDIA_SRTP_KEYING_SDES : PJMEDIA_SRTP_KEYING_DTLS_SRTP }
        let suites = srtp.cryptoSuites.map { scope.pj($0) }
        keying.withUnsafeBufferPointer { keys in
            suites.withUnsafeBufferPointer { names in
                cpj_acc_config_set_srtp(
                    &config, use, Int32(srtp.secureSignaling.rawValue), keys.baseAddress, UInt32(keys.count),
                    names.baseAddress, UInt32(names.count))
            }
        }
    }

    /// Reads which keying each of the call's streams negotiated, from the active SDP.
    /// Call only from a call callback (`on_call_media_state`), where pjsua holds the dialog.
    static func recordSRTPKeying(_ slot: pjsua_call_id, call: Call, bridge: EngineBridge) {
        var keying: [Int: SRTPConfiguration.Keying] = [:]
        // PJSUA_MAX_CALL_MEDIA is at most 16; past the SDP's last m= line the shim answers -1.
        for index in 0..<16 {
            switch cpj_call_srtp_keying(slot, UInt32(index)) {
            case Int32(PJMEDIA_SRTP_KEYING_SDES.rawValue): keying[index] = .sdes
            case Int32(PJMEDIA_SRTP_KEYING_DTLS_SRTP.rawValue): keying[index] = .dtlsSRTP
            default: break
            }
        }
        let negotiated = NegotiatedKeying(generation: call.generation, keying: keying)
        bridge.media.withLock { $0.negotiatedKeying[slot] = negotiated }
    }

    /// The SRTP session of one of a call's streams; `nil` for plain RTP (no SRTP transport,
    /// or one that neither started a session nor negotiated SRTP in the SDP: optional SRTP
    /// that fell back). A stream whose SDP negotiated DTLS-SRTP and whose handshake has not
    /// ended yet has a session with no suite. Safe on any thread:
    /// `pjsua_call_get_med_transport_info` locks the call.
    static func srtpSession(_ slot: pjsua_call_id, call: Call, mediaIndex: Int) -> SRTPSession? {
        var active: pj_bool_t = 0
        var buffer = [CChar](repeating: 0, count: 64)
        let found = buffer.withUnsafeMutableBufferPointer { suite in
            cpj_call_srtp_info(slot, UInt32(mediaIndex), &active, suite.baseAddress, UInt32(suite.count))
        }
        guard found != 0 else { return nil }
        let keying = EngineBridge.active()?.media.withLock { media -> SRTPConfiguration.Keying? in
            guard let entry = media.negotiatedKeying[slot], entry.generation == call.generation else { return nil }
            return entry.keying[mediaIndex]
        }
        guard active != 0 else { return keying.map { SRTPSession(cryptoSuite: nil, keying: $0) } }
        let suite = buffer.withUnsafeBufferPointer { pointer -> String in
            guard let base = pointer.baseAddress else { return "" }
            return PJ.string(cBuffer: base, capacity: pointer.count)
        }
        return SRTPSession(cryptoSuite: suite, keying: keying)
    }
}

extension Native {
    /// Replaces an account's SRTP settings, keeping the rest of its configuration. Wraps
    /// `pjsua_acc_get_config` and `pjsua_acc_modify` (which copies the suite names; an
    /// account without a registrar is not re-registered).
    static func setSRTP(_ srtp: SRTPConfiguration, for account: Account) throws(PJSUAError) {
        guard let pool = pjsua_pool_create("acc-srtp", 1024, 1024) else {
            throw PJ.error(cpj_status_enomem(), "pjsua_pool_create")
        }
        defer { pj_pool_release(pool) }
        var config = pjsua_acc_config()
        try PJ.check(pjsua_acc_get_config(account.slot, pool, &config), "pjsua_acc_get_config")
        let scope = StringScope()
        applySRTP(srtp, to: &config, scope: scope)
        try PJ.check(pjsua_acc_modify(account.slot, &config), "pjsua_acc_modify")
        withExtendedLifetime(scope) {}
    }
}

extension PJSUAError.Code {
    /// `PJSIP_ESESSIONINSECURE`: the account's SRTP requires secure signalling
    /// (``SRTPConfiguration/secureSignaling``) and the call's transport is not TLS (or the
    /// URI not `sips:`); ``PJSUA/makeCall(to:from:headers:)`` throws it before any INVITE.
    public static var insecureSession: Self { .init(rawValue: cpj_status_esessioninsecure()) }
}
