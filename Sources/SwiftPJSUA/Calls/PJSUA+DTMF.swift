extension PJSUA {
    // MARK: DTMF

    /// Sends DTMF digits on a confirmed call.
    ///
    /// Received digits arrive as ``PJSUAEvent/dtmf(_:)``.
    /// Wraps `pjsua_call_send_dtmf`.
    /// - Parameters:
    ///   - call: a confirmed call.
    ///   - digits: `0`–`9`, `*`, `#`, `A`–`D` (lowercase `a`–`d` are accepted). pjmedia queues
    ///     at most 32 RFC 4733 digits per call; more throw ``PJSUAError/Code/tooMany``.
    ///   - method: RFC 4733 telephone-events in RTP, or one SIP INFO per digit
    ///     (`application/dtmf-relay`).
    ///   - duration: each digit's length: `Duration=` in ms for SIP INFO; for RFC 4733 the
    ///     events' duration from pjproject 2.14 on, while 2.12 sends pjmedia's fixed
    ///     `PJMEDIA_DTMF_DURATION` of 1600 timestamp units: 200 ms with an 8 kHz codec (PCMU,
    ///     PCMA, G.722), but 33 ms with opus (48 kHz), shorter than many receivers accept. A
    ///     hold or resume that follows waits until queued RFC 4733 digits have been sent, and
    ///     RFC 4733 digits sent while a re-INVITE or UPDATE is unanswered (right after
    ///     ``resume(_:)``, say) are queued once it is answered, up to 2 s later: its answer
    ///     may rebuild the audio stream, which would drop them.
    /// - Throws: ``PJSUAUsageError/invalidDTMFDigits(_:)`` for an empty string or another
    ///   character; ``PJSUAUsageError/invalidArgument(_:)`` for a duration outside 1 ms–10 s;
    ///   ``PJSUAUsageError/unknownCall(_:)``;
    ///   ``PJSUAUsageError/invalidCallState(_:_:)`` when the call is not confirmed;
    ///   ``PJSUAError`` when the stream has no telephone-event payload negotiated.
    public func sendDTMF(
        _ call: Call, digits: String, method: DTMFMethod = .rfc4733, duration: Duration = .milliseconds(160)
    ) async throws {
        let allowed = Set("0123456789*#ABCD")
        let normalized = digits.uppercased()
        guard !normalized.isEmpty, normalized.allSatisfy(allowed.contains) else {
            throw PJSUAUsageError.invalidDTMFDigits(digits)
        }
        // Compare durations, not milliseconds: converting an enormous duration would overflow.
        guard duration >= .milliseconds(1), duration <= .seconds(10) else {
            throw PJSUAUsageError.invalidArgument("a DTMF digit lasts 1 ms to 10 s, not \(duration)")
        }
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        var slot = try confirmedSlot(call)
        if method == .rfc4733 {
            let deadline = ContinuousClock.now + .seconds(2)
            while Native.offerPending(slot), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
                slot = try confirmedSlot(call)
            }
        }
        try Native.sendDTMF(slot, digits: normalized, method: method, milliseconds: Int(milliseconds))
        if method == .rfc4733 {
            let now = ContinuousClock.now
            dtmfDrainEstimates = dtmfDrainEstimates.filter { $0.value > now }
            let perDigit = max(duration, .milliseconds(200)) + .milliseconds(80)
            let start = max(dtmfDrainEstimates[call] ?? now, now)
            dtmfDrainEstimates[call] = start + perDigit * normalized.count
        }
    }

    /// Waits until the RFC 4733 digits queued on `call` have been sent: a re-INVITE that
    /// rebuilds the audio stream (hold, resume) would drop them. pjproject 2.17 counts them
    /// (`pjsua_call_get_queued_dtmf_digits`); earlier versions cannot, and the wait lasts
    /// until the estimate made by ``sendDTMF(_:digits:method:duration:)`` (each digit's
    /// duration, at least 200 ms, plus 80 ms for its end packets). At most 10 s, and no
    /// longer than 1 s without a digit going out (a stream nothing clocks, such as one with
    /// the sound device detached, never sends them).
    func waitForQueuedDigits(_ call: Call, slot: Int32) async throws {
        let limit = ContinuousClock.now + .seconds(10)
        var slot = slot
        var last = (count: Int.max, at: ContinuousClock.now)
        while ContinuousClock.now < limit {
            let queued = Native.queuedDTMFDigits(slot)
            if queued == 0 { break }
            if queued > 0 {
                if queued < last.count { last = (queued, .now) }
                if ContinuousClock.now - last.at > .seconds(1) { break }
            }
            if queued < 0 {
                // No count in this pjproject: wait out the estimate.
                guard let estimate = dtmfDrainEstimates[call], estimate > .now else { break }
                try await Task.sleep(until: min(estimate, limit))
                break
            }
            try await Task.sleep(for: .milliseconds(20))
            slot = try confirmedSlot(call)
        }
        dtmfDrainEstimates[call] = nil
    }
}
