extension PJSUA {
    // MARK: Re-INVITE and UPDATE on demand

    /// The reason of the ``CallState/disconnected`` event of a call that ended because a
    /// session refresh failed: a re-INVITE or UPDATE pjsip sent on its own (a session-timer
    /// refresh, RFC 4028, see ``SessionTimers``) was answered 481 Call/Transaction Does Not
    /// Exist or 408, or got no answer. pjsip then sends BYE (RFC 5057 §5.1); the event's
    /// status code is the refresh's (481 or 408).
    public static let sessionRefreshFailedReason = "session refresh failed: the peer no longer has the dialog"

    /// Sends a re-INVITE on a confirmed call (RFC 3261 §14): with `includingSDP`, the call's
    /// current offer again (a new SDP version, the same media); without, an INVITE with no
    /// body, so that the peer makes the offer in its 2xx and the engine answers in the ACK.
    ///
    /// Returns when the re-INVITE is sent. A new negotiation's outcome arrives as
    /// ``PJSUAEvent/callMediaState(_:)``; a refusal (3xx–6xx) leaves the call as it was, except
    /// 481 or 408, after which pjsip ends the call (RFC 5057 §5.1). While another offer/answer
    /// exchange is still finishing (pjsua allows one INVITE transaction at a time), waits up
    /// to 2 s for it. Runs on the engine thread. Wraps `pjsua_call_reinvite` (with
    /// `PJSUA_CALL_NO_SDP_OFFER` without SDP).
    /// - Parameters:
    ///   - call: a confirmed call.
    ///   - includingSDP: whether the re-INVITE carries an offer; `true` by default.
    ///   - headers: extra headers for the request.
    /// - Throws: ``PJSUAUsageError/notStarted`` or ``PJSUAUsageError/shutDown`` when the
    ///   engine is not running; ``PJSUAUsageError/unknownCall(_:)`` for a call that ended or a
    ///   stale handle; ``PJSUAUsageError/invalidCallState(_:_:)`` when the call is not
    ///   confirmed; ``PJSUAUsageError/invalidHeader(_:)``; ``PJSUAError`` with
    ///   ``PJSUAError/Code/invalidOperation`` when an exchange is still pending after 2 s, or
    ///   another pjsua failure.
    public func reinvite(_ call: Call, includingSDP: Bool = true, headers: [SIPHeader] = []) async throws {
        try Self.validateHeaders(headers)
        try await afterPendingOffer(call) { slot, bridge in
            try Native.sendRequestedOffer(
                call, slot: slot, method: .reinvite, includingSDP: includingSDP, headers: headers, bridge: bridge)
        }
    }

    /// Sends an UPDATE on a confirmed call (RFC 3311): with `includingSDP`, the call's current
    /// offer again; without, an UPDATE with no body, which only refreshes the session (RFC 4028)
    /// or carries headers. The peer must allow UPDATE (most do; pjsua checks nothing).
    ///
    /// Returns when the UPDATE is sent; an offer's outcome arrives as
    /// ``PJSUAEvent/callMediaState(_:)``. A 481 or 408 answer makes pjsip end the call (RFC
    /// 5057 §5.1). With an offer, waits up to 2 s for an offer/answer exchange still finishing,
    /// as ``reinvite(_:includingSDP:headers:)`` does. Runs on the engine thread. Wraps
    /// `pjsua_call_update` (with `PJSUA_CALL_NO_SDP_OFFER` without SDP).
    /// - Parameters:
    ///   - call: a confirmed call.
    ///   - includingSDP: whether the UPDATE carries an offer; `true` by default.
    ///   - headers: extra headers for the request.
    /// - Throws: as ``reinvite(_:includingSDP:headers:)``.
    public func update(_ call: Call, includingSDP: Bool = true, headers: [SIPHeader] = []) async throws {
        try Self.validateHeaders(headers)
        try await afterPendingOffer(call) { slot, bridge in
            try Native.sendRequestedOffer(
                call, slot: slot, method: .update, includingSDP: includingSDP, headers: headers, bridge: bridge)
        }
    }
}
