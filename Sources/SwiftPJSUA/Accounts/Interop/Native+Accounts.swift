import CPJSUAShim

extension Native {
    // MARK: Accounts

    /// An account for calls straight to and from this transport's address, with no registrar
    /// (like `pjsua_acc_add_local`, but with the engine's RTP port range). With
    /// `contactIsTransportAddress`, the Contact is that address too (`force_contact`): before
    /// 2.13, pjsua put the interface's address in a UDP Contact, not the configured public one.
    static func addLocalAccount(
        transport: Transport, isDefault: Bool, rtpPorts: ClosedRange<UInt16>, rtpAddress: String?,
        rtpPublicAddress: String? = nil, contactIsTransportAddress: Bool = false
    ) throws(PJSUAError) -> Account {
        let info = try transportInfo(transport)
        let host = info.host.contains(":") ? "[\(info.host)]" : info.host
        var uri = "<sip:\(host):\(info.port)"
        if info.type.isReliable { uri += ";transport=\(info.type.uriParameter)" }
        uri += ">"
        let scope = StringScope()
        var config = pjsua_acc_config()
        pjsua_acc_config_default(&config)
        config.id = scope.pj(uri)
        if contactIsTransportAddress { config.force_contact = scope.pj(uri) }
        config.transport_id = transport.id
        config.priority -= 1
        try applyRTP(&config, ports: rtpPorts, address: rtpAddress, publicAddress: rtpPublicAddress, scope: scope)
        var slot = pjsua_acc_id(cpj_invalid_id())
        try ensureRoomForAccount()
        try PJ.check(pjsua_acc_add(&config, isDefault ? 1 : 0, &slot), "pjsua_acc_add")
        // Anyone may call a local account; the slot may hold a deleted account's policy.
        forgetAdmission(slot)
        return try Handles.addedAccount(slot)
    }

    /// Throws ``PJSUAError/Code/tooMany`` when every account slot is taken: pjsua_acc_add
    /// checks that with an assertion, which aborts the process in a debug pjproject.
    private static func ensureRoomForAccount() throws(PJSUAError) {
        guard pjsua_acc_get_count() < cpj_max_accounts() else {
            throw PJ.error(cpj_status_etoomany(), "pjsua_acc_add")
        }
    }

    /// Sets the account's RTP ports and address. Throws
    /// ``PJSUAError/Code/addressFamilyNotSupported`` for an IPv6 address in a pjproject built
    /// without IPv6: pjsua_acc_add and pjsua_acc_modify assert on it (2.15+), aborting the process.
    static func applyRTP(
        _ config: inout pjsua_acc_config, ports: ClosedRange<UInt16>, address: String?, publicAddress: String? = nil,
        scope: StringScope
    ) throws(PJSUAError) {
        if let address, address.contains(":"), !hasIPv6 {
            throw ipv6Unavailable("pjsua_acc_add", "RTP address \(address) is IPv6")
        }
        let start = rtpSearchStart(ports, randomizedByPJSUA: cpj_rtp_randomize_port(&config.rtp_cfg) != 0)
        config.rtp_cfg.port = UInt32(start)
        config.rtp_cfg.port_range = UInt32(ports.upperBound - start)
        if let address {
            config.rtp_cfg.bound_addr = scope.pj(address)
            config.rtp_cfg.public_addr = scope.pj(address)
            // An IPv6 RTP address needs IPv6 media sockets and SDP; an IPv4 one, IPv4.
            config.ipv6_media_use = cpj_ipv6_media_use(address.contains(":") ? 1 : 0)
        }
        if let publicAddress { config.rtp_cfg.public_addr = scope.pj(publicAddress) }
    }

    /// Where the account's RTP port search starts. pjsua (2.13+, `randomize_port`) picks
    /// a random even start in [port, port + port_range] and wraps to `port`, so the whole
    /// range stays `port`. pjsua 2.12 starts at `port` and wraps to it, so the engine
    /// picks the random even start itself, low enough that 100 pairs (pjsua's retries)
    /// fit above it when the range allows.
    static func rtpSearchStart(_ ports: ClosedRange<UInt16>, randomizedByPJSUA: Bool) -> UInt16 {
        if randomizedByPJSUA { return ports.lowerBound }
        let room = Int(ports.upperBound) - Int(ports.lowerBound) + 1 - 200
        guard room > 0 else { return ports.lowerBound }
        return ports.lowerBound + UInt16(Int.random(in: 0...room) / 2 * 2)
    }

    static func removeAccount(_ account: Account) throws(PJSUAError) {
        try PJ.check(pjsua_acc_del(account.slot), "pjsua_acc_del")
        forgetAdmission(account.slot)
    }
    static var maxCredentials: Int { Int(cpj_acc_max_credentials()) }
    static var maxProxies: Int { Int(cpj_acc_max_proxies()) }

    /// Adds an account from a full configuration. Wraps `pjsua_acc_add`, which copies the
    /// configuration (strings, credentials and headers) before returning.
    static func addAccount(
        _ account: AccountConfiguration, rtpPorts: ClosedRange<UInt16>, rtpAddress: String?,
        rtpPublicAddress: String? = nil, beforeRegistering: (Account) -> Void
    ) throws(PJSUAError) -> Account {
        var slot = pjsua_acc_id(cpj_invalid_id())
        try withAccountConfig(
            account, rtpPorts: rtpPorts, rtpAddress: rtpAddress, rtpPublicAddress: rtpPublicAddress
        ) { config throws(PJSUAError) in
            // pjsua_acc_add only logs a failure to start registering; register here instead,
            // so that a registration that cannot even be sent fails the add.
            config.register_on_acc_add = 0
            // The user data holds the handle's generation, given once the account exists.
            config.user_data = nil
            try ensureRoomForAccount()
            try PJ.check(pjsua_acc_add(&config, account.isDefault ? 1 : 0, &slot), "pjsua_acc_add")
        }
        let handle = try Handles.addedAccount(slot)
        configureAdmission(slot, account)
        // The first response can arrive on a worker thread before this returns: whatever
        // its callback reads about the account must exist before the REGISTER is sent.
        beforeRegistering(handle)
        if account.registrar != nil && account.registersOnAdd {
            do {
                try setRegistration(slot, renew: true)
            } catch {
                _ = pjsua_acc_del(slot)
                throw error
            }
        }
        return handle
    }

    /// Replaces an account's configuration. Wraps `pjsua_acc_modify`, which re-registers
    /// when the registration settings changed.
    static func modifyAccount(
        _ slot: pjsua_acc_id, _ account: AccountConfiguration, rtpPorts: ClosedRange<UInt16>, rtpAddress: String?,
        rtpPublicAddress: String? = nil
    ) throws(PJSUAError) {
        try withAccountConfig(
            account, rtpPorts: rtpPorts, rtpAddress: rtpAddress, rtpPublicAddress: rtpPublicAddress
        ) { config throws(PJSUAError) in
            // The handle's generation lives in the configuration's user data: keep it.
            config.user_data = pjsua_acc_get_user_data(slot)
            try PJ.check(pjsua_acc_modify(slot, &config), "pjsua_acc_modify")
            configureAdmission(slot, account)
            if account.isDefault { try PJ.check(pjsua_acc_set_default(slot), "pjsua_acc_set_default") }
        }
    }

    /// Fills a `pjsua_acc_config` from `account` and hands it to `body`; the strings and the
    /// header pool live until `body` returns.
    private static func withAccountConfig(
        _ account: AccountConfiguration, rtpPorts: ClosedRange<UInt16>, rtpAddress: String?,
        rtpPublicAddress: String?, _ body: (inout pjsua_acc_config) throws(PJSUAError) -> Void
    ) throws(PJSUAError) {
        let scope = StringScope()
        var config = pjsua_acc_config()
        pjsua_acc_config_default(&config)
        config.id = scope.pj(account.identity)
        applyNetworkChangePolicy(&config, account.networkChange)
        if let registrar = account.registrar { config.reg_uri = scope.pj(registrar) }
        config.cred_count = UInt32(account.credentials.count)
        for (index, credential) in account.credentials.enumerated() {
            guard let info = cpj_acc_credential(&config, UInt32(index)) else { break }
            info.pointee.realm = scope.pj(credential.realm)
            info.pointee.scheme = scope.pj("digest")
            info.pointee.username = scope.pj(credential.username)
            switch credential.secret {
            case .password(let password):
                info.pointee.data_type = Int32(cpj_cred_plain_password())
                info.pointee.data = scope.pj(password)
            case .ha1(let ha1):
                info.pointee.data_type = Int32(cpj_cred_digest())
                info.pointee.data = scope.pj(ha1)
            }
        }
        config.proxy_cnt = UInt32(account.outboundProxies.count)
        for (index, proxy) in account.outboundProxies.enumerated() {
            cpj_acc_set_proxy(&config, UInt32(index), scope.pj(proxy))
        }
        if let transport = account.transport { config.transport_id = transport.id }
        config.reg_timeout = UInt32(clamping: account.registrationExpiry.components.seconds)
        // Retry at the configured interval, the first retry too, with the configured spread.
        config.reg_retry_interval = UInt32(clamping: account.retryInterval.components.seconds)
        config.reg_first_retry_interval = config.reg_retry_interval
        config.reg_retry_random_interval = UInt32(clamping: account.retryJitter.components.seconds)
        if !account.contactParameters.isEmpty { config.contact_params = scope.pj(account.contactParameters) }
        if let push = account.push, push.scope == .allRequests {
            config.contact_uri_params = scope.pj(push.uriParameters)
        }
        try applyRTP(&config, ports: rtpPorts, address: rtpAddress, publicAddress: rtpPublicAddress, scope: scope)
        applyNATSignaling(account.natSignaling, to: &config, rtpPublicAddress: rtpPublicAddress, scope: scope)
        applyMediaNAT(account, to: &config, scope: scope)
        applyNAT64(account.nat64, to: &config)
        config.mwi_enabled = account.subscribesToMessageWaiting ? 1 : 0
        config.publish_enabled = account.publishesPresence ? 1 : 0
        config.mwi_expires = UInt32(clamping: account.messageWaitingExpiry.components.seconds)

        var pool: UnsafeMutablePointer<pj_pool_t>?
        // Push parameters for REGISTER only travel in a private header to the module that
        // puts them in the Contact URI (see cpj_register_push_contact_module): pjsua's
        // reg_contact_uri_params re-parses the Contact unterminated and can assert.
        let pushOnRegister = account.push.flatMap { $0.scope == .registerOnly ? $0.uriParameters : nil }
        if !account.registerHeaders.isEmpty || pushOnRegister != nil {
            pool = pjsua_pool_create("acc-headers", 512, 512)
            guard let pool else { throw PJ.error(cpj_status_enomem(), "pjsua_pool_create") }
            for header in account.registerHeaders {
                cpj_acc_add_register_header(&config, pool, scope.pj(header.name), scope.pj(header.value))
            }
            if let pushOnRegister {
                cpj_acc_add_register_header(&config, pool, cpj_push_params_header_name(), scope.pj(pushOnRegister))
            }
        }
        defer { if let pool { pj_pool_release(pool) } }
        // The app's edit comes last; `body` then sets what the engine's bookkeeping needs
        // (the handle's user data, registering after the add).
        applySRTP(account.srtp, to: &config, scope: scope)
        applySessionPolicy(account, to: &config)
        account.nativeAdjustment?.apply(to: &config, strings: NativeStrings(scope))
        try body(&config)
        withExtendedLifetime(scope) {}
    }

    static func accountInfo(_ account: Account, lastOutcome: RegistrationOutcome?) throws(PJSUAError) -> AccountInfo {
        var info = pjsua_acc_info()
        try PJ.check(pjsua_acc_get_info(account.slot, &info), "pjsua_acc_get_info")
        // Only this account's own REGISTER outcomes count. pjsua keeps the last status and
        // lifetime after an unregistration, and a slot reused by a new account starts with
        // the deleted account's last status (and, with no registration yet, a lifetime of
        // PJSIP_EXPIRES_NOT_SPECIFIED): before the first response there is nothing to report.
        let answered = lastOutcome != nil
        let code = answered ? Int(info.status.rawValue) : 0
        let registered =
            answered && info.has_registration != 0 && info.expires > 0
            && info.expires != cpj_expires_not_specified() && code / 100 == 2 && lastOutcome?.isRegistered == true
        return AccountInfo(
            account: account, identity: PJ.string(info.acc_uri), isDefault: info.is_default != 0,
            hasRegistration: info.has_registration != 0, isRegistered: registered,
            statusCode: code,
            reason: answered ? reason(of: lastOutcome, code: code) ?? PJ.string(info.status_text) : "",
            expiresIn: registered ? .seconds(Int64(info.expires)) : .zero,
            isOnline: info.online_status != 0)
    }

    /// The engine's own reason for a failure with `code`, when it gave one (a stale-nonce
    /// limit, say): pjsua keeps only the code and names it by the code's standard phrase.
    private static func reason(of outcome: RegistrationOutcome?, code: Int) -> String? {
        if case .failed(code, let reason)? = outcome { return reason }
        return nil
    }

    static func accounts() -> [Account] {
        var slots = [pjsua_acc_id](repeating: 0, count: Int(cpj_max_accounts()))
        var count = UInt32(slots.count)
        guard pjsua_enum_accs(&slots, &count) == cpj_success() else { return [] }
        return slots.prefix(Int(count)).compactMap { Handles.account($0) }
    }

    /// Starts registering (`renew`) or unregistering. Wraps `pjsua_acc_set_registration`.
    static func setRegistration(_ slot: pjsua_acc_id, renew: Bool) throws(PJSUAError) {
        try PJ.check(pjsua_acc_set_registration(slot, renew ? 1 : 0), "pjsua_acc_set_registration")
    }
}
