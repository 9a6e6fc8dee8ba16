extension PJSUA {
    // MARK: Transports and accounts

    /// The SIP transports created at start, with their bound addresses and ports.
    /// Wraps `pjsua_transport_get_info`.
    /// - Throws: ``PJSUAUsageError/notStarted`` or ``PJSUAUsageError/shutDown``.
    public func transports() throws -> [TransportInfo] {
        try runtime().transports.map { try Native.transportInfo($0) }
    }

    /// Adds an account for calls straight to and from a transport's address, with no
    /// registrar (its identity is `<sip:host:port>` of the transport).
    /// Wraps `pjsua_acc_add` (as `pjsua_acc_add_local` does, with the engine's RTP ports).
    /// - Parameters:
    ///   - transport: the transport; `nil` means the first one configured.
    ///   - isDefault: make it the account for requests no other account matches.
    /// - Returns: the new account's handle.
    /// - Throws: ``PJSUAUsageError`` when not running; ``PJSUAError`` when pjsua refuses.
    public func addLocalAccount(on transport: Transport? = nil, isDefault: Bool = true) throws -> Account {
        let runtime = try runtime()
        guard let transport = transport ?? runtime.transports.first else {
            throw PJSUAUsageError.invalidConfiguration("no transport")
        }
        let media = runtime.configuration.media
        return try Native.addLocalAccount(
            transport: transport, isDefault: isDefault, rtpPorts: media.rtpPorts,
            rtpAddress: media.rtpAddress ?? runtime.bindAddress(of: transport))
    }

    /// Adds an account, registering it with its registrar when it has one and
    /// ``AccountConfiguration/registersOnAdd`` is set. Registration outcomes arrive as
    /// ``PJSUAEvent/registrationState(account:active:statusCode:reason:expiration:)`` events.
    /// Wraps `pjsua_acc_add`.
    /// - Returns: the new account's handle.
    /// - Throws: ``PJSUAUsageError/invalidURI(_:)`` when the identity, registrar or a proxy is
    ///   not a SIP URI; ``PJSUAUsageError/invalidConfiguration(_:)`` for out-of-range values;
    ///   ``PJSUAError`` when pjsua refuses (for example ``PJSUAError/Code/tooMany`` accounts).
    public func addAccount(_ configuration: AccountConfiguration) throws -> Account {
        let runtime = try runtime()
        let identity = SIPAddress(parsing: configuration.identity).uri
        guard Native.isValidSIPURI(identity) else { throw PJSUAUsageError.invalidURI(configuration.identity) }
        for uri in [configuration.registrar].compactMap({ $0 }) + configuration.outboundProxies {
            guard Native.isValidSIPURI(SIPAddress(parsing: uri).uri) else { throw PJSUAUsageError.invalidURI(uri) }
        }
        let texts = [configuration.contactParameters] + configuration.registerHeaders.flatMap { [$0.name, $0.value] }
        guard !texts.contains(where: \.containsLineBreakOrControl) else {
            throw PJSUAUsageError.invalidConfiguration("header and Contact parameter text must not contain control characters")
        }
        guard configuration.credentials.count <= Native.maxCredentials else {
            throw PJSUAUsageError.invalidConfiguration("at most \(Native.maxCredentials) credentials")
        }
        guard configuration.outboundProxies.count <= Native.maxProxies else {
            throw PJSUAUsageError.invalidConfiguration("at most \(Native.maxProxies) outbound proxies")
        }
        guard configuration.registrationExpiry >= .seconds(1), configuration.retryInterval >= .zero else {
            throw PJSUAUsageError.invalidConfiguration("registrationExpiry must be at least 1 s")
        }
        if let transport = configuration.transport, !runtime.transports.contains(transport) {
            throw PJSUAUsageError.invalidConfiguration("unknown \(transport)")
        }
        let media = runtime.configuration.media
        let transport = configuration.transport ?? runtime.transports.first
        return try Native.addAccount(
            configuration, rtpPorts: media.rtpPorts,
            rtpAddress: media.rtpAddress ?? transport.flatMap { runtime.bindAddress(of: $0) })
    }

    /// A snapshot of an account's state. Wraps `pjsua_acc_get_info`.
    /// - Throws: ``PJSUAUsageError/unknownAccount(_:)`` for a stale handle.
    public func accountInfo(_ account: Account) throws -> AccountInfo {
        _ = try liveSlot(account)
        return try Native.accountInfo(account)
    }

    /// Every account, in pjsua's order. Wraps `pjsua_enum_accs`.
    public func accounts() throws -> [Account] {
        _ = try runtime()
        return Native.accounts()
    }

    /// Registers (`renew: true`) or unregisters the account now; the outcome arrives as a
    /// registration event. Wraps `pjsua_acc_set_registration`.
    /// - Throws: ``PJSUAUsageError/unknownAccount(_:)``; ``PJSUAError`` when the account has
    ///   no registrar.
    public func setRegistration(_ account: Account, renew: Bool) throws {
        try Native.setRegistration(try liveSlot(account), renew: renew)
    }

    /// Removes an account. Wraps `pjsua_acc_del` (which unregisters a registered account).
    /// - Throws: ``PJSUAUsageError/unknownAccount(_:)`` for a stale handle.
    public func removeAccount(_ account: Account) throws {
        let slot = try liveSlot(account)
        try Native.removeAccount(Account(slot: slot, generation: account.generation))
    }
}
