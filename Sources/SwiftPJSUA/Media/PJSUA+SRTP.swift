extension PJSUA {
    /// Adds an account for calls straight to and from a transport's address, as
    /// ``addLocalAccount(on:isDefault:mediaInactivityTimeout:transportLossPolicy:)`` does,
    /// with encrypted media: `srtp` governs the calls it places and the offers it accepts.
    ///
    /// Wraps `pjsua_acc_add`, then `pjsua_acc_modify` for the SRTP settings.
    /// - Parameters:
    ///   - transport: the transport; `nil` means the first one configured.
    ///   - isDefault: make it the account for requests no other account matches.
    ///   - mediaInactivityTimeout: as ``AccountConfiguration/mediaInactivityTimeout``.
    ///   - transportLossPolicy: as ``AccountConfiguration/transportLossPolicy``.
    ///   - srtp: as ``AccountConfiguration/srtp``.
    /// - Returns: the new account's handle.
    /// - Throws: ``PJSUAUsageError/invalidConfiguration(_:)`` for an SRTP keying this
    ///   pjproject lacks or an unknown suite (before anything is added); otherwise as
    ///   ``addLocalAccount(on:isDefault:mediaInactivityTimeout:transportLossPolicy:)``.
    public func addLocalAccount(
        on transport: Transport? = nil, isDefault: Bool = true, mediaInactivityTimeout: Duration? = nil,
        transportLossPolicy: TransportLossPolicy = .reinvite, srtp: SRTPConfiguration
    ) throws -> Account {
        try srtp.validate()
        let account = try addLocalAccount(
            on: transport, isDefault: isDefault, mediaInactivityTimeout: mediaInactivityTimeout,
            transportLossPolicy: transportLossPolicy)
        do {
            try Native.setSRTP(srtp, for: account)
        } catch {
            // A local account has no registration to end: deleting it is all there is to undo.
            try? Native.removeAccount(account)
            throw error
        }
        return account
    }
}
