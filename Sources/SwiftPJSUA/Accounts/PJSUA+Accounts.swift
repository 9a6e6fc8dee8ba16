extension PJSUA {
    // MARK: Accounts

    /// Adds an account for calls straight to and from a transport's address, with no
    /// registrar (its identity is `<sip:host:port>` of the transport).
    /// Wraps `pjsua_acc_add` (as `pjsua_acc_add_local` does, with the engine's RTP ports).
    /// - Parameters:
    ///   - transport: the transport; `nil` means the first one configured.
    ///   - isDefault: make it the account for requests no other account matches.
    ///   - mediaInactivityTimeout: end confirmed calls whose audio receives no RTP for this
    ///     long, as ``AccountConfiguration/mediaInactivityTimeout``; `nil` never does.
    ///   - transportLossPolicy: what to do with a confirmed call whose TCP or TLS connection
    ///     is lost, as ``AccountConfiguration/transportLossPolicy``.
    /// - Returns: the new account's handle.
    /// - Throws: ``PJSUAUsageError`` when not running;
    ///   ``PJSUAUsageError/unknownTransport(_:)`` for a transport this run of the engine
    ///   did not create; ``PJSUAUsageError/invalidConfiguration(_:)`` for a timeout outside
    ///   ``PJSUA/mediaInactivityTimeoutRange``;
    ///   ``PJSUAError`` when pjsua refuses.
    public func addLocalAccount(
        on transport: Transport? = nil, isDefault: Bool = true, mediaInactivityTimeout: Duration? = nil,
        transportLossPolicy: TransportLossPolicy = .reinvite
    ) throws -> Account {
        let runtime = try runtime()
        try Self.validateMediaInactivityTimeout(mediaInactivityTimeout)
        guard let transport = transport ?? runtime.transports.first else {
            throw PJSUAUsageError.unknownTransport(nil)
        }
        // pjsua asserts (aborts, in a debug pjproject) on a transport id it does not hold,
        // such as one from an earlier run of the engine.
        guard runtime.transports.contains(transport) else {
            throw PJSUAUsageError.unknownTransport(transport)
        }
        let media = runtime.configuration.media
        let account = try Native.addLocalAccount(
            transport: transport, isDefault: isDefault, rtpPorts: media.rtpPorts,
            rtpAddress: media.rtpAddress ?? runtime.bindAddress(of: transport),
            rtpPublicAddress: runtime.rtpPublicAddress(of: transport),
            contactIsTransportAddress: runtime.publicAddress(of: transport) != nil)
        runtime.bridge.deadPeers.configure(
            account, .init(mediaInactivityTimeout: mediaInactivityTimeout, transportLossPolicy: transportLossPolicy))
        return account
    }

    /// Adds an account, registering it with its registrar when it has one and
    /// ``AccountConfiguration/registersOnAdd`` is set (to wait for the outcome, use
    /// ``addAccount(_:awaitingRegistration:)``). Registration outcomes arrive as
    /// ``PJSUAEvent/registrationState(_:)`` events.
    /// Wraps `pjsua_acc_add`.
    /// - Returns: the new account's handle.
    /// - Throws: ``PJSUAUsageError/invalidURI(_:)`` when the identity, registrar or a proxy is
    ///   not a SIP URI; ``PJSUAUsageError/invalidConfiguration(_:)`` for out-of-range values;
    ///   ``PJSUAUsageError/invalidHeader(_:)`` for a REGISTER header whose name is not a token;
    ///   ``PJSUAUsageError/invalidConfiguration(_:)`` also for ``AccountConfiguration/nat64``
    ///   without a UDP over IPv6 transport (see ``NAT64Mode``);
    ///   ``PJSUAError`` when pjsua refuses (for example ``PJSUAError/Code/tooMany`` accounts).
    public func addAccount(_ configuration: AccountConfiguration) throws -> Account {
        let runtime = try runtime()
        try configuration.validate()
        try validateNAT64(configuration, runtime: runtime)
        let effective = try withTransportParameters(configuration, runtime: runtime)
        let records = runtime.bridge.accountRecords
        var added: Account?
        do {
            return try Native.addAccount(
                effective, rtpPorts: runtime.configuration.media.rtpPorts,
                rtpAddress: rtpAddress(of: configuration, runtime: runtime),
                rtpPublicAddress: runtime.rtpPublicAddress(of: configuration.transport ?? runtime.transports.first)
            ) { account in
                added = account
                runtime.bridge.deadPeers.configure(account, .init(configuration))
                records.configure(
                    account, configuration: configuration,
                    wantsRegistration: configuration.registrar != nil && configuration.registersOnAdd)
            }
        } catch {
            if let added { records.remove(added) }
            throw error
        }
    }

    /// Replaces an account's configuration. When the registration settings change (registrar,
    /// credentials, Contact or push parameters, expiry…) pjsua removes the old binding and
    /// registers again; the outcomes arrive as registration events.
    /// Wraps `pjsua_acc_modify`.
    /// - Throws: ``PJSUAUsageError/unknownAccount(_:)`` for a stale handle; the same errors
    ///   as ``addAccount(_:)`` for an invalid configuration.
    public func modifyAccount(_ account: Account, _ configuration: AccountConfiguration) throws {
        let runtime = try runtime()
        let slot = try liveSlot(account)
        try configuration.validate()
        try validateNAT64(configuration, runtime: runtime)
        let effective = try withTransportParameters(configuration, runtime: runtime)
        try Native.modifyAccount(
            slot, effective, rtpPorts: runtime.configuration.media.rtpPorts,
            rtpAddress: rtpAddress(of: configuration, runtime: runtime),
            rtpPublicAddress: runtime.rtpPublicAddress(of: configuration.transport ?? runtime.transports.first))
        runtime.bridge.deadPeers.configure(account, .init(configuration))
        runtime.bridge.accountRecords.configure(
            account, configuration: configuration, wantsRegistration: configuration.registrar != nil)
    }

    /// Where the account's RTP binds: the configured media address, else the bind address of
    /// the account's transport (or of the first transport).
    private func rtpAddress(of configuration: AccountConfiguration, runtime: Runtime) -> String? {
        let transport = configuration.transport ?? runtime.transports.first
        return runtime.configuration.media.rtpAddress ?? transport.flatMap { runtime.bindAddress(of: $0) }
    }

    /// The configuration an account was added or last modified with.
    /// - Throws: ``PJSUAUsageError/unknownAccount(_:)`` for a stale handle or a local account.
    public func accountConfiguration(_ account: Account) throws(PJSUAUsageError) -> AccountConfiguration {
        let runtime = try runtime()
        _ = try liveSlot(account)
        guard let configuration = runtime.bridge.accountRecords.configuration(of: account) else {
            throw PJSUAUsageError.unknownAccount(account)
        }
        return configuration
    }

    /// What pjsua gets of a validated `configuration`: with a TCP or TLS transport, the
    /// registrar and proxy URIs carry the matching `transport` parameter.
    /// - Throws: ``PJSUAUsageError/unknownTransport(_:)`` for a transport this run of the
    ///   engine did not create.
    private func withTransportParameters(
        _ configuration: AccountConfiguration, runtime: Runtime
    ) throws(PJSUAUsageError) -> AccountConfiguration {
        var effective = configuration
        guard let transport = configuration.transport else { return effective }
        guard let index = runtime.transports.firstIndex(of: transport) else {
            throw .unknownTransport(transport)
        }
        let type = runtime.configuration.transports[index].type
        if type.isReliable {
            effective.registrar = configuration.registrar.map { SIPAddress.addingTransport(type.uriParameter, to: $0) }
            effective.outboundProxies = configuration.outboundProxies.map {
                SIPAddress.addingTransport(type.uriParameter, to: $0)
            }
        }
        return effective
    }

    /// A snapshot of an account's state. Wraps `pjsua_acc_get_info`.
    /// - Throws: ``PJSUAUsageError/unknownAccount(_:)`` for a stale handle.
    public func accountInfo(_ account: Account) throws -> AccountInfo {
        let runtime = try runtime()
        _ = try liveSlot(account)
        return try Native.accountInfo(account, lastOutcome: runtime.bridge.accountRecords.lastOutcome(of: account))
    }

    /// Every account, in pjsua's order. Wraps `pjsua_enum_accs`.
    public func accounts() throws(PJSUAUsageError) -> [Account] {
        _ = try runtime()
        return Native.accounts()
    }

    /// Removes an account. A registered account is unregistered first and the outcome
    /// awaited, at most for `deadline`; then the account is deleted (`pjsua_acc_del`).
    ///
    /// The account's calls are not ended: they go on (media, hold, DTMF, in-dialog requests
    /// from the peer, hang-up) with ``CallInfo/account`` `nil`. End them first if they should
    /// not outlive it. An INVITE that arrives while the account is being removed, and that
    /// pjsua still hands to it, is answered 480 Temporarily Unavailable and never reported.
    /// - Parameters:
    ///   - account: the account to remove.
    ///   - deadline: how long to wait for the registrar to confirm the unregistration.
    /// - Returns: how the unregistration ended: ``RegistrationOutcome/unregistered`` or
    ///   ``RegistrationOutcome/failed(statusCode:reason:)``; `nil` when the account was not
    ///   registered or the registrar did not answer within `deadline`.
    /// - Throws: ``PJSUAUsageError/unknownAccount(_:)`` for a stale handle (also when the
    ///   account was removed while this call waited).
    @discardableResult
    public func removeAccount(
        _ account: Account, deadline: Duration = .seconds(5)
    ) async throws -> RegistrationOutcome? {
        let runtime = try runtime()
        var slot = try liveSlot(account)
        runtime.bridge.accountRecords.setWantsRegistration(account, false)
        var outcome: RegistrationOutcome?
        if try accountInfo(account).isRegistered {
            let hub = runtime.bridge.hub
            let events = hub.subscribe()
            let result = OutcomeBox()
            if (try? Native.setRegistration(slot, renew: false)) != nil {
                await Self.waitUntil(deadline: deadline, events: events) { event in
                    guard case .registrationState(let change)? = event, change.account == account, !change.isRegistered
                    else { return false }
                    result.set(change.outcome)
                    return true
                }
            }
            outcome = result.value
            // Another caller may have removed it, or the engine shut down, meanwhile.
            slot = try liveSlot(account)
        }
        runtime.bridge.accountRecords.remove(account)
        try Native.removeAccount(Account(slot: slot, generation: account.generation))
        return outcome
    }
}
