extension PJSUA {
    // MARK: Transfer

    /// The reason of the final ``PJSUAEvent/transferStatus(_:)`` (408) of a REFER whose far
    /// end sent no NOTIFY within 64 × T1 of it (RFC 6665 §4.1.2.4, Timer N).
    public static let transferTimeoutReason = "no NOTIFY within 64*T1 of the REFER (RFC 6665 4.1.2.4 Timer N)"

    /// The reason of the final ``PJSUAEvent/transferStatus(_:)`` (487) of a REFER still
    /// waiting for its outcome when its call ended: whether the far end reached the target is
    /// not known.
    public static let transferCallEndedReason = "call ended before the transfer's outcome was reported"

    /// Blind transfer: sends REFER asking the far end to call `uri`.
    ///
    /// Progress arrives as ``PJSUAEvent/transferStatus(_:)``: the REFER's response (202 as
    /// `100 Accepted`), then each NOTIFY's sipfrag status line. Every REFER gets exactly one
    /// final event (``TransferProgress/isFinal``), and it comes before the call's terminal
    /// event:
    /// - the REFER's error response (for example 403; the call stays up);
    /// - the first final status (200–699) a NOTIFY reports, or the end of the subscription;
    /// - 408 with ``transferTimeoutReason`` when no NOTIFY arrived within 64 × T1 of the
    ///   REFER (Timer N, RFC 6665 §4.1.2.4; T1 is ``SIPTimers/t1``, 32 s by default);
    /// - 487 with ``transferCallEndedReason`` when the call ends first.
    ///
    /// Nothing is reported after that: a 202 or NOTIFY that comes later (even after the call
    /// ended) is handled by pjsip and dropped, and never creates a call handle. One REFER per call at a time: pjsua's
    /// `on_call_transfer_status` does not say which of two subscriptions a NOTIFY belongs to.
    /// Wraps `pjsua_call_xfer`.
    /// - Parameters:
    ///   - call: the confirmed call whose far end should call `uri`.
    ///   - uri: the Refer-To target, a SIP or SIPS URI.
    ///   - headers: extra headers for the REFER.
    /// - Throws: ``PJSUAUsageError/invalidURI(_:)``; ``PJSUAUsageError/invalidHeader(_:)``;
    ///   ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAUsageError/invalidCallState(_:_:)`` when
    ///   the call is not confirmed; ``PJSUAUsageError/transferPending(_:)`` while the call's
    ///   previous REFER has no final event yet; ``PJSUAError`` when pjsua refuses.
    public func transfer(_ call: Call, to uri: String, headers: [SIPHeader] = []) throws {
        // The URI check parses with pjsua's pool factory: only while pjsua exists.
        _ = try runtime()
        guard Native.isValidSIPURI(uri) else { throw PJSUAUsageError.invalidURI(uri) }
        try Self.validateHeaders(headers)
        let slot = try confirmedSlot(call)
        try sendREFER(on: call) { try Native.transfer(slot, to: uri, headers: headers) }
    }

    /// Attended transfer: sends REFER on `call` whose Refer-To names the far end of `other`
    /// with a `Replaces` parameter (RFC 3891) for `other`'s dialog, so the far end of `call`
    /// replaces our call with `other`'s far end. Progress and its one final event as for
    /// ``transfer(_:to:headers:)``.
    ///
    /// The Refer-To is `other`'s remote Contact URI (the device that answered, RFC 5589 §7),
    /// not its To URI as `pjsua_call_xfer_replaces` builds it: through a proxy, or with an
    /// address-of-record several devices registered, the To URI can reach another device,
    /// which answers 481. It carries `Require=replaces` and `Replaces=` with the Call-ID,
    /// `to-tag` (the far end's tag) and `from-tag` (ours) of `other`'s dialog, escaped as a
    /// URI header value (RFC 3261 §25.1): `<sip:bob@192.0.2.4:5060?Require=replaces&Replaces=
    /// 1234%40host%3Bto-tag%3Db7%3Bfrom-tag%3Da1>`. Wraps `pjsua_call_xfer`.
    /// - Throws: ``PJSUAUsageError/invalidArgument(_:)`` when `call` and `other` are the
    ///   same call; ``PJSUAUsageError/unknownCall(_:)`` for either call;
    ///   ``PJSUAUsageError/invalidCallState(_:_:)`` when either is not confirmed;
    ///   ``PJSUAUsageError/transferPending(_:)`` while `call` has a REFER pending;
    ///   ``PJSUAError`` when pjsua refuses.
    public func transfer(_ call: Call, replacing other: Call, headers: [SIPHeader] = []) throws {
        // Replacing a call's own dialog makes the far end end the call it was asked to keep.
        guard call != other else {
            throw PJSUAUsageError.invalidArgument("a call cannot be transferred to replace itself")
        }
        try Self.validateHeaders(headers)
        let slot = try confirmedSlot(call)
        let otherSlot = try confirmedSlot(other)
        try sendREFER(on: call) { try Native.transfer(slot, replacing: otherSlot, headers: headers) }
    }

    /// Records the REFER as pending, sends it, and starts its Timer N.
    private func sendREFER(on call: Call, _ send: () throws -> Void) throws {
        let hub = try runtime().bridge.hub
        let id = nextGeneration()
        guard hub.beginTransfer(on: call, id: id) else {
            throw hub.hasEnded(call) ? PJSUAUsageError.unknownCall(call) : PJSUAUsageError.transferPending(call)
        }
        do {
            try send()
        } catch {
            hub.abandonTransfer(on: call, id: id)
            throw error
        }
        Native.startTimerN(forTransfer: id)
    }

    /// Decides how incoming REFERs are answered. Without a handler (the default) every REFER
    /// is accepted with 202 and the engine calls the target as a new call. Either way each
    /// REFER is reported as ``PJSUAEvent/transferRequest(_:)``.
    ///
    /// The handler runs on a pjsua thread while pjsua waits for the answer: it must return
    /// quickly and must not call into the engine. Wraps `on_call_transfer_request2`.
    /// - Parameter handler: returns ``TransferDecision/accept`` or
    ///   ``TransferDecision/reject(statusCode:)`` (400–699); `nil` accepts all.
    /// - Throws: ``PJSUAUsageError`` when the engine is not running (the handler lasts until
    ///   shutdown).
    public func setTransferRequestHandler(_ handler: (@Sendable (TransferRequest) -> TransferDecision)?) throws {
        let runtime = try runtime()
        runtime.bridge.calls.withLock { $0.transferHandler = handler }
    }
}
