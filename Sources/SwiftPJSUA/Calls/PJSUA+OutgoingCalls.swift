extension PJSUA {
    // MARK: Placing calls with their events

    /// Places a call and returns it with a subscription to its events that was made before
    /// the INVITE went out — the race-free way to follow a call you place.
    ///
    /// The stream holds every state of the call, from ``CallState/calling`` to its one
    /// terminal event, even one that pjsua reports before this method returns. (Subscribing
    /// with ``events(for:)`` after ``makeCall(to:from:headers:)`` starts from the call's
    /// state at that moment instead, so it can miss the states in between.)
    ///
    /// <!-- snippet-setup:
    /// let engine = PJSUA()
    /// let account: Account = placeholder()
    /// -->
    /// ```swift
    /// let outgoing = try await engine.placeCall(
    ///     to: "sip:bob@example.com", from: account, headers: [SIPHeader(name: "X-Campaign", value: "7")])
    /// for await event in outgoing.events {
    ///     if case .callState(let change) = event { print(change.state, change.statusCode) }
    /// }
    /// ```
    ///
    /// Runs on the engine thread; wraps `pjsua_call_make_call`.
    /// - Parameters:
    ///   - uri: the target SIP or SIPS URI.
    ///   - account: the account the call is made from.
    ///   - headers: extra headers for the INVITE, for example `X-Campaign: 7`.
    /// - Returns: the call and its events (see ``OutgoingCall/events``).
    /// - Throws: as ``makeCall(to:from:headers:)``.
    public func placeCall(to uri: String, from account: Account, headers: [SIPHeader] = []) throws -> OutgoingCall {
        let hub = try runtime().bridge.hub
        let accountSlot = try liveSlot(account)
        guard Native.isValidSIPURI(uri) else { throw PJSUAUsageError.invalidURI(uri) }
        try Self.validateHeaders(headers)
        let generation = nextGeneration()
        let events = hub.subscribe(generation: generation)
        do {
            let call = try Native.makeCall(
                to: uri, from: accountSlot, headers: headers + policyHeaders(of: account), generation: generation)
            return OutgoingCall(call: call, events: events)
        } catch {
            // pjsua can report a first state and then fail the call without reporting its
            // end: the call's subscribers (and the global stream) still get one.
            hub.synthesizeEnd(generation: generation, reason: "placing the call failed: \(error)")
            throw error
        }
    }

    /// Places a call and returns it with its events; the former name of
    /// ``placeCall(to:from:headers:)``.
    @available(*, deprecated, renamed: "placeCall(to:from:headers:)")
    public func makeCallWithEvents(to uri: String, from account: Account) throws -> (
        call: Call, events: AsyncStream<PJSUAEvent>
    ) {
        let outgoing = try placeCall(to: uri, from: account)
        return (outgoing.call, outgoing.events)
    }

    /// Places a call and waits until it reaches `milestone`.
    ///
    /// If the task awaiting this method is cancelled before then, the call is hung up
    /// (CANCEL, or ACK and BYE should the far end answer at the same moment) and the
    /// method throws `CancellationError`. The engine is never held while waiting: other
    /// engine methods run meanwhile.
    ///
    /// Wraps `pjsua_call_make_call` (and `pjsua_call_hangup` on cancellation).
    /// - Parameters:
    ///   - uri: the target SIP or SIPS URI.
    ///   - account: the account the call is made from.
    ///   - headers: extra headers for the INVITE.
    ///   - milestone: ``CallMilestone/confirmed`` (the default) or ``CallMilestone/early``.
    /// - Returns: the call, in the milestone's state or later.
    /// - Throws: ``CallFailedError`` with the final SIP status when the call ends first
    ///   (rejected, timed out, or ended by the engine's shutdown); `CancellationError` when
    ///   the task is cancelled; otherwise as ``makeCall(to:from:headers:)``.
    public func call(
        _ uri: String, from account: Account, headers: [SIPHeader] = [], awaiting milestone: CallMilestone = .confirmed
    ) async throws -> Call {
        try Task.checkCancellation()
        let outgoing = try placeCall(to: uri, from: account, headers: headers)
        let call = outgoing.call
        for await event in outgoing.events {
            guard case .callState(let change) = event else { continue }
            if change.state.isTerminal {
                throw CallFailedError(call: call, statusCode: change.statusCode, reason: change.reason)
            }
            if milestone.isReached(by: change.state) { return call }
        }
        // The stream ended without a terminal event: the task was cancelled (a finished
        // engine delivers the terminal event before finishing streams).
        if Task.isCancelled {
            // Throws unknownCall when the call ended meanwhile: nothing left to hang up.
            try? hangup(call)
            throw CancellationError()
        }
        throw CallFailedError(call: call, statusCode: 0, reason: Self.engineShutDownReason)
    }
}
