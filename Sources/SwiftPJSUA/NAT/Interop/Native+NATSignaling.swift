import CPJSUAShim

extension Native {
    // MARK: NAT traversal for signalling

    /// Fills the account's keep-alive, rewrite and RFC 5626 fields from `settings`, after
    /// ``applyRTP(_:ports:address:publicAddress:scope:)``. The strings live in `scope`, which
    /// `pjsua_acc_add`/`pjsua_acc_modify` copy from.
    static func applyNATSignaling(
        _ settings: NATSignaling, to config: inout pjsua_acc_config, rtpPublicAddress: String?, scope: StringScope
    ) {
        config.ka_interval = UInt32(clamping: settings.keepAliveInterval.components.seconds)
        if let rewrite = settings.contactRewrite {
            config.allow_contact_rewrite = rewrite.scope == .always ? 2 : 1
            var method =
                rewrite.method == .replaceInOneRequest
                ? PJSUA_CONTACT_REWRITE_NO_UNREG.rawValue : PJSUA_CONTACT_REWRITE_UNREGISTER.rawValue
            if rewrite.onFailureResponses { method |= PJSUA_CONTACT_REWRITE_ALWAYS_UPDATE.rawValue }
            config.contact_rewrite_method = Int32(method)
        } else {
            config.allow_contact_rewrite = 0
        }
        config.allow_via_rewrite = settings.rewritesVia ? 1 : 0
        config.allow_sdp_nat_rewrite = settings.rewritesSDPAddress ? 1 : 0
        // pjsua takes an RTP public address over the one the registrar saw: the bind address
        // the engine advertises there would hide it. An explicit public address still wins.
        if settings.rewritesSDPAddress, rtpPublicAddress == nil { config.rtp_cfg.public_addr = pj_str_t() }
        if let outbound = settings.outbound {
            config.use_rfc5626 = 1
            if let id = outbound.instanceID { config.rfc5626_instance_id = scope.pj(id) }
            if let id = outbound.registrationID { config.rfc5626_reg_id = scope.pj(String(id)) }
        } else {
            config.use_rfc5626 = 0
        }
    }
}
