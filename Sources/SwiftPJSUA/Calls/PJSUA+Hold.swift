extension PJSUA {
    // MARK: Hold

    /// Puts a call on hold (RFC 3264 §8.4, RFC 6337 §5.3): sends a re-INVITE offering
    /// `a=sendonly`, or `a=inactive` when the far end already holds us. Holding a held call
    /// offers the same again, never `sendrecv`.
    ///
    /// Returns when the re-INVITE is sent; the ``PJSUAEvent/callMediaState(_:)``
    /// event with ``MediaStatus/localHold`` follows when the far end answers. A 491 Request
    /// Pending (the far end's re-INVITE crossed ours, RFC 3261 §14.1) is retried after a
    /// random 2.1–4 s on a call we placed, 0–2 s on one we answered, up to
    /// ``reinviteGlareAttempts`` tries; when the far end refuses for good,
    /// ``PJSUAEvent/reinviteFailed(_:)`` follows instead of the media event. While another
    /// offer/answer exchange is still finishing (pjsua allows one INVITE transaction at a
    /// time), waits up to 2 s for it. Wraps `pjsua_call_set_hold2`.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAUsageError/invalidCallState(_:_:)``
    ///   when the call is not confirmed; ``PJSUAError`` with ``PJSUAError/Code/invalidOperation``
    ///   when an exchange is still pending after 2 s, or another pjsua failure.
    public func setHold(_ call: Call) async throws {
        try await afterPendingOffer(call) { try Native.sendReoffer(call, slot: $0, purpose: .hold, bridge: $1) }
    }

    /// Takes a call off hold: sends a re-INVITE offering `a=sendrecv`, waiting up to 2 s for
    /// an exchange still in progress, retrying a 491 and reporting a refusal with
    /// ``PJSUAEvent/reinviteFailed(_:)`` like ``setHold(_:)``. Wraps `pjsua_call_reinvite` with
    /// `PJSUA_CALL_UNHOLD`.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAUsageError/invalidCallState(_:_:)``
    ///   when the call is not confirmed; ``PJSUAError`` as for ``setHold(_:)``.
    public func resume(_ call: Call) async throws {
        try await afterPendingOffer(call) { try Native.sendReoffer(call, slot: $0, purpose: .resume, bridge: $1) }
    }

    /// Runs `send` on the confirmed call's slot (with the running engine's bridge); while
    /// pjsua refuses because an INVITE transaction is still open (no event marks its end),
    /// retries every 20 ms for up to 2 s, re-checking the call after each wait.
    func afterPendingOffer(_ call: Call, _ send: (Int32, EngineBridge) throws -> Void) async throws {
        try await waitForQueuedDigits(call, slot: try confirmedSlot(call))
        let deadline = ContinuousClock.now + .seconds(2)
        while true {
            let slot = try confirmedSlot(call)
            let bridge = try runtime().bridge
            do {
                try send(slot, bridge)
                return
            } catch let error as PJSUAError where error.code == .invalidOperation && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
