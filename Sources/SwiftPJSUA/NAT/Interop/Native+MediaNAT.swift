import CPJSUAShim

// STUN, ICE and TURN: the pjsua fields behind MediaNAT.swift's types.
extension Native {
    /// The size of `pjsua_config.stun_srv`.
    static var maxSTUNServers: Int { Int(cpj_max_stun_servers()) }

    /// Fills the STUN fields of `config` and the ICE and TURN fields of `media`; the strings
    /// live in `scope`.
    static func applyMediaNAT(
        _ configuration: Configuration, config: inout pjsua_config, media: inout pjsua_media_config,
        scope: StringScope
    ) {
        for server in configuration.stun.servers { cpj_config_add_stun_server(&config, scope.pj(server)) }
        config.stun_try_ipv6 = configuration.stun.triesIPv6 ? 1 : 0
        config.stun_ignore_failure = configuration.stun.ignoresFailure ? 1 : 0

        let ice = configuration.media.ice
        media.enable_ice = ice.isEnabled ? 1 : 0
        media.ice_max_host_cands = Int32(clamping: ice.hostCandidateLimit ?? -1)
        media.ice_no_rtcp = ice.usesRTCP ? 0 : 1
        apply(ice, to: &media.ice_opt)

        media.enable_turn = configuration.media.turn == nil ? 0 : 1
        if let turn = configuration.media.turn {
            media.turn_server = scope.pj(turn.server)
            media.turn_conn_type = turn.transport.native
            apply(turn, cred: &media.turn_auth_cred, tls: &media.turn_tls_setting, scope: scope)
        }
    }

    /// Fills the account's ICE and TURN choice: the engine's (`*_USE_DEFAULT`, the value
    /// `pjsua_acc_config_default` left) or its own.
    static func applyMediaNAT(_ account: AccountConfiguration, to config: inout pjsua_acc_config, scope: StringScope) {
        if case .custom(let ice) = account.ice {
            config.ice_cfg_use = PJSUA_ICE_CONFIG_USE_CUSTOM
            config.ice_cfg.enable_ice = ice.isEnabled ? 1 : 0
            config.ice_cfg.ice_max_host_cands = Int32(clamping: ice.hostCandidateLimit ?? -1)
            config.ice_cfg.ice_no_rtcp = ice.usesRTCP ? 0 : 1
            apply(ice, to: &config.ice_cfg.ice_opt)
        }
        if case .custom(let turn) = account.turn {
            config.turn_cfg_use = PJSUA_TURN_CONFIG_USE_CUSTOM
            config.turn_cfg.enable_turn = turn == nil ? 0 : 1
            if let turn {
                config.turn_cfg.turn_server = scope.pj(turn.server)
                config.turn_cfg.turn_conn_type = turn.transport.native
                apply(turn, cred: &config.turn_cfg.turn_auth_cred, tls: &config.turn_cfg.turn_tls_setting, scope: scope)
            }
        }
    }

    private static func apply(_ ice: ICEConfiguration, to options: inout pj_ice_sess_options) {
        options.aggressive = ice.aggressiveNomination ? 1 : 0
        options.trickle =
            switch ice.trickle {
            case .disabled: PJ_ICE_SESS_TRICKLE_DISABLED
            case .half: PJ_ICE_SESS_TRICKLE_HALF
            case .full: PJ_ICE_SESS_TRICKLE_FULL
            }
    }

    private static func apply(
        _ turn: TURNConfiguration, cred: inout pj_stun_auth_cred, tls: inout pj_turn_sock_tls_cfg, scope: StringScope
    ) {
        if let credential = turn.credential {
            cred.type = PJ_STUN_AUTH_CRED_STATIC
            cred.data.static_cred.realm = scope.pj(credential.realm)
            cred.data.static_cred.username = scope.pj(credential.username)
            switch credential.secret {
            case .password(let password):
                cred.data.static_cred.data_type = PJ_STUN_PASSWD_PLAIN
                cred.data.static_cred.data = scope.pj(password)
            case .ha1:
                // The long-term key itself, MD5(username:realm:password) as 16 bytes (validated).
                cred.data.static_cred.data_type = PJ_STUN_PASSWD_HASHED
                cred.data.static_cred.data = scope.pj(bytes: credential.secret.ha1Bytes ?? [])
            }
        }
        if turn.transport == .tls {
            if let caFile = turn.tls.caFile { tls.ca_list_file = scope.pj(caFile) }
            if let certificate = turn.tls.certificateFile { tls.cert_file = scope.pj(certificate) }
            if let key = turn.tls.privateKeyFile { tls.privkey_file = scope.pj(key) }
        }
    }

    /// A call's media transport of one stream. Wraps `pjsua_call_get_med_transport_info`
    /// and `pjmedia_transport_info_get_spc_info` (through `cpj_call_media_transport`).
    static func mediaTransport(_ slot: pjsua_call_id, mediaIndex: Int) throws(PJSUAError) -> MediaTransportInfo {
        guard let index = UInt32(exactly: mediaIndex) else {
            throw PJ.error(cpj_status_enotfound(), "pjsua_call_get_med_transport_info")
        }
        let info = UnsafeMutablePointer<pjmedia_transport_info>.allocate(capacity: 1)
        let ice = UnsafeMutablePointer<pjmedia_ice_transport_info>.allocate(capacity: 1)
        defer {
            info.deallocate()
            ice.deallocate()
        }
        var hasICE: Int32 = 0
        try PJ.check(cpj_call_media_transport(slot, index, info, ice, &hasICE), "pjsua_call_get_med_transport_info")
        let source = text(of: &info.pointee.src_rtp_name)
        var negotiation: ICENegotiation?
        if hasICE != 0 {
            let state = ice.pointee
            // The pairs are meaningful once checks have nominated them.
            let nominated = state.sess_state == PJ_ICE_STRANS_STATE_RUNNING
            var pairs: [ICECandidatePair] = []
            if nominated {
                var localType = PJ_ICE_CAND_TYPE_HOST, remoteType = PJ_ICE_CAND_TYPE_HOST
                var local = pj_sockaddr(), remote = pj_sockaddr()
                var index: UInt32 = 0
                while cpj_ice_component(ice, index, &localType, &local, &remoteType, &remote) != 0 {
                    pairs.append(
                        ICECandidatePair(
                            local: ICECandidate(type: ICECandidateType(native: localType), address: text(of: &local)),
                            remote: ICECandidate(type: ICECandidateType(native: remoteType), address: text(of: &remote))
                        ))
                    index += 1
                }
            }
            negotiation = ICENegotiation(
                isActive: state.active != 0, state: ICEState(native: state.sess_state),
                isControlling: state.role == PJ_ICE_SESS_ROLE_CONTROLLING, selectedPairs: pairs)
        }
        return MediaTransportInfo(
            localAddress: text(of: &info.pointee.sock_info.rtp_addr_name), rtpSource: source.isEmpty ? nil : source,
            ice: negotiation)
    }

    /// `address:port` of a socket address, empty for none.
    private static func text(of address: inout pj_sockaddr) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            guard let base = buffer.baseAddress else { return "" }
            cpj_sockaddr_text(&address, base, 64)
            return String(cString: base)
        }
    }
}

extension TURNTransport {
    var native: pj_turn_tp_type {
        switch self {
        case .udp: PJ_TURN_TP_UDP
        case .tcp: PJ_TURN_TP_TCP
        case .tls: PJ_TURN_TP_TLS
        }
    }
}

extension ICECandidateType {
    init(native: pj_ice_cand_type) {
        switch native {
        case PJ_ICE_CAND_TYPE_SRFLX: self = .serverReflexive
        case PJ_ICE_CAND_TYPE_PRFLX: self = .peerReflexive
        case PJ_ICE_CAND_TYPE_RELAYED: self = .relayed
        default: self = .host
        }
    }
}

extension ICEState {
    init(native: pj_ice_strans_state) {
        switch native {
        case PJ_ICE_STRANS_STATE_INIT: self = .gathering
        case PJ_ICE_STRANS_STATE_READY: self = .ready
        case PJ_ICE_STRANS_STATE_SESS_READY: self = .sessionReady
        case PJ_ICE_STRANS_STATE_NEGO: self = .checking
        case PJ_ICE_STRANS_STATE_RUNNING: self = .completed
        case PJ_ICE_STRANS_STATE_FAILED: self = .failed
        default: self = .idle
        }
    }
}
