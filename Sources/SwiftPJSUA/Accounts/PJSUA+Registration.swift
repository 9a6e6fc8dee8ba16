extension PJSUA {
    // MARK: Registration

    /// Adds an account and waits for its first registration outcome: the one-step way to
    /// register.
    ///
    /// <!-- snippet-setup:
    /// let engine = PJSUA()
    /// let configuration = AccountConfiguration(identity: "sip:alice@example.com", registrar: "sip:example.com")
    /// -->
    /// ```swift
    /// let registration = try await engine.addAccount(configuration, awaitingRegistration: .seconds(10))
    /// print("registered for \(registration.expiration)")
    /// ```
    ///
    /// Runs on the engine thread while adding the account; the engine is not held while
    /// waiting. Wraps `pjsua_acc_add`.
    /// - Parameters:
    ///   - configuration: the account; it needs a registrar, and `registersOnAdd` is taken
    ///     as `true`.
    ///   - deadline: how long to wait for the registrar's final answer. pjsip gives up on an
    ///     unanswered REGISTER after 64 × T1 (32 s with the default ``SIPTimers``) and reports
    ///     408; a shorter deadline ends the wait sooner. More than zero, at most a year.
    /// - Returns: the outcome, with ``RegistrationChange/outcome`` registered; its
    ///   ``RegistrationChange/account`` is the new account's handle.
    /// - Throws: ``RegistrationFailedError`` when the registrar refused (its SIP status), no
    ///   final answer came within `deadline`, or the engine shut down meanwhile; the error
    ///   holds the account, which stays added (pjsua retries after
    ///   ``AccountConfiguration/retryInterval``) until you remove it. `CancellationError` when
    ///   the task is cancelled while waiting (the account stays added);
    ///   ``PJSUAUsageError/unknownAccount(_:)`` when the account is removed while waiting;
    ///   ``PJSUAUsageError/invalidArgument(_:)`` for a deadline that is not positive or is
    ///   over a year. Before any wait: the
    ///   errors of ``addAccount(_:)``, and ``PJSUAUsageError/noRegistrar`` for a
    ///   configuration without a registrar.
    public func addAccount(_ configuration: AccountConfiguration, awaitingRegistration deadline: Duration)
        async throws -> RegistrationChange
    {
        guard configuration.registrar != nil else { throw PJSUAUsageError.noRegistrar }
        try Self.validateWaitDeadline(deadline)
        var configuration = configuration
        configuration.registersOnAdd = true
        let bridge = try runtime().bridge
        let events = bridge.hub.subscribe()
        let account = try addAccount(configuration)
        return try await Self.registrationOutcome(of: account, in: events, deadline: deadline, bridge: bridge)
    }

    /// Sends a REGISTER now and waits for the registrar's final answer: the awaitable form of
    /// ``setRegistration(_:renew:)`` with `renew: true`.
    ///
    /// When a REGISTER of the account is already in flight (the account was just added, a
    /// refresh is under way, or another task called this), no second one is sent: the method
    /// waits for that one's answer.
    ///
    /// Runs on the engine thread while sending; the engine is not held while waiting. Wraps
    /// `pjsua_acc_set_registration`.
    /// - Parameters:
    ///   - account: an account with a registrar.
    ///   - deadline: how long to wait (see ``addAccount(_:awaitingRegistration:)``).
    /// - Returns: the outcome, with ``RegistrationChange/outcome`` registered.
    /// - Throws: ``RegistrationFailedError`` when the registrar refused, no answer came
    ///   within `deadline`, or the engine shut down; `CancellationError` when the task is
    ///   cancelled while waiting; ``PJSUAUsageError/unknownAccount(_:)`` when the account is
    ///   removed while waiting. Before sending: ``PJSUAUsageError/unknownAccount(_:)``,
    ///   ``PJSUAUsageError/noRegistrar``, ``PJSUAUsageError/invalidArgument(_:)`` for a bad
    ///   deadline, or ``PJSUAError``.
    @discardableResult
    public func register(_ account: Account, deadline: Duration = .seconds(32)) async throws -> RegistrationChange {
        let runtime = try runtime()
        let slot = try liveSlot(account)
        guard runtime.bridge.accountRecords.configuration(of: account)?.registrar != nil else {
            throw PJSUAUsageError.noRegistrar
        }
        try Self.validateWaitDeadline(deadline)
        let events = runtime.bridge.hub.subscribe()
        runtime.bridge.accountRecords.setWantsRegistration(account, true)
        do {
            try Native.setRegistration(slot, renew: true)
        } catch let error where error.code == .registrationInFlight {
            // A REGISTER of this account is in flight (just added, refreshing, or another
            // caller's): its answer is the outcome to wait for.
        }
        return try await Self.registrationOutcome(of: account, in: events, deadline: deadline, bridge: runtime.bridge)
    }

    /// The first registration event of `account` on `events` (a subscription made before
    /// the REGISTER went out), or the error that says why none came.
    private static func registrationOutcome(
        of account: Account, in events: AsyncStream<PJSUAEvent>, deadline: Duration, bridge: EngineBridge
    ) async throws -> RegistrationChange {
        enum Wait: Sendable { case answered(RegistrationChange), engineStopped, accountRemoved, deadlinePassed }
        let records = bridge.accountRecords
        let wait: Wait = await withTaskGroup(of: Wait.self) { group in
            group.addTask {
                for await event in events {
                    guard case .registrationState(let change) = event, change.account == account else { continue }
                    // pjsua_destroy ends a REGISTER still in flight with a transport error.
                    return bridge.isDestroying.withLock { $0 } ? .engineStopped : .answered(change)
                }
                return .engineStopped
            }
            group.addTask {
                // The deadline, in slices, so that removing the account ends the wait too.
                let end = ContinuousClock.now + deadline
                while ContinuousClock.now < end {
                    guard (try? await Task.sleep(for: min(.milliseconds(50), end - ContinuousClock.now))) != nil
                    else { return .deadlinePassed }
                    if records.configuration(of: account) == nil { return .accountRemoved }
                }
                return .deadlinePassed
            }
            let first = await group.next() ?? .engineStopped
            group.cancelAll()
            return first
        }
        try Task.checkCancellation()
        switch wait {
        case .answered(let change) where change.isRegistered:
            return change
        case .answered(let change):
            throw RegistrationFailedError(
                account: account, statusCode: change.statusCode, reason: change.reason, isDeadlineExceeded: false)
        case .engineStopped:
            throw RegistrationFailedError(
                account: account, statusCode: 0, reason: engineShutDownReason, isDeadlineExceeded: false)
        case .accountRemoved:
            throw PJSUAUsageError.unknownAccount(account)
        case .deadlinePassed:
            throw RegistrationFailedError(
                account: account, statusCode: 408, reason: "no final response to REGISTER within \(deadline)",
                isDeadlineExceeded: true)
        }
    }

    /// Registers (`renew: true`) or unregisters the account now; the outcome arrives as a
    /// registration event. Unregistering also stops automatic retries until the account
    /// is registered again. Wraps `pjsua_acc_set_registration`.
    /// - Throws: ``PJSUAUsageError/unknownAccount(_:)``; ``PJSUAError`` when the account has
    ///   no registrar.
    public func setRegistration(_ account: Account, renew: Bool) throws {
        let runtime = try runtime()
        let slot = try liveSlot(account)
        runtime.bridge.accountRecords.setWantsRegistration(account, renew)
        try Native.setRegistration(slot, renew: renew)
    }

    /// Sends a REGISTER now, optionally with new RFC 8599 push parameters (for example a new
    /// device token, or after a push that asks the app to refresh its binding).
    ///
    /// With new push parameters the account is modified (`pjsua_acc_modify`): pjsua removes
    /// the binding with the old Contact and registers the new one. Without, the binding is
    /// refreshed (`pjsua_acc_set_registration`). The outcome arrives as a registration event.
    /// - Parameters:
    ///   - account: the account to register.
    ///   - push: the new push parameters; `nil` keeps the current ones.
    /// - Throws: ``PJSUAUsageError/unknownAccount(_:)``; ``PJSUAUsageError/noRegistrar``
    ///   when the account has no registrar; ``PJSUAError`` when pjsua refuses.
    public func reRegister(_ account: Account, updatingPush push: PushConfiguration? = nil) throws {
        let runtime = try runtime()
        let slot = try liveSlot(account)
        guard var configuration = runtime.bridge.accountRecords.configuration(of: account),
            configuration.registrar != nil
        else {
            throw PJSUAUsageError.noRegistrar
        }
        if let push, push != configuration.push {
            configuration.push = push
            try modifyAccount(account, configuration)
        } else {
            runtime.bridge.accountRecords.setWantsRegistration(account, true)
            try Native.setRegistration(slot, renew: true)
        }
    }
}
