extension PJSUA {
    // MARK: Hold, mute, DTMF

    /// The slot of a confirmed call, or a typed error.
    private func confirmedSlot(_ call: Call) throws -> Int32 {
        let slot = try liveSlot(call)
        guard let info = Native.readCallInfo(slot, call: call) else { throw PJSUAUsageError.unknownCall(call) }
        guard info.state == .confirmed else { throw PJSUAUsageError.invalidCallState(call, info.state) }
        return slot
    }

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
        try await afterPendingOffer(call) { try Native.sendReoffer(call, slot: $0, purpose: .hold) }
    }

    /// Takes a call off hold: sends a re-INVITE offering `a=sendrecv`, waiting up to 2 s for
    /// an exchange still in progress, retrying a 491 and reporting a refusal with
    /// ``PJSUAEvent/reinviteFailed(_:)`` like ``setHold(_:)``. Wraps `pjsua_call_reinvite` with
    /// `PJSUA_CALL_UNHOLD`.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAUsageError/invalidCallState(_:_:)``
    ///   when the call is not confirmed; ``PJSUAError`` as for ``setHold(_:)``.
    public func resume(_ call: Call) async throws {
        try await afterPendingOffer(call) { try Native.sendReoffer(call, slot: $0, purpose: .resume) }
    }

    /// Runs `send` on the confirmed call's slot; while pjsua refuses because an INVITE
    /// transaction is still open (no event marks its end), retries every 20 ms for up to
    /// 2 s, re-checking the call after each wait.
    private func afterPendingOffer(_ call: Call, _ send: (Int32) throws -> Void) async throws {
        try await waitForQueuedDigits(call, slot: try confirmedSlot(call))
        let deadline = ContinuousClock.now + .seconds(2)
        while true {
            let slot = try confirmedSlot(call)
            do {
                try send(slot)
                return
            } catch let error as PJSUAError where error.code == .invalidOperation && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
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

    /// Mutes or unmutes what a call transmits: while muted the far end hears silence (RTP
    /// keeps flowing, so NATs and the far end's media timers stay happy). Covers the sound
    /// device, players and conference partners alike, and lasts across re-INVITEs.
    /// Wraps `pjsua_conf_adjust_tx_level` (level 0 or 1) on the call's conference slot.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``.
    public func setMuted(_ call: Call, muted: Bool) throws(PJSUAUsageError) {
        let runtime = try runtime()
        _ = try liveSlot(call)
        Native.setMuted(bridge: runtime.bridge, call: call, muted)
    }

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
    ///     PCMA, G.722), but 33 ms with opus (48 kHz), shorter than many receivers accept. A hold or resume that follows waits
    ///     until queued RFC 4733 digits have been sent.
    /// - Throws: ``PJSUAUsageError/invalidDTMFDigits(_:)`` for an empty string or another
    ///   character; ``PJSUAUsageError/invalidArgument(_:)`` for a duration outside 1 ms–10 s;
    ///   ``PJSUAUsageError/unknownCall(_:)``;
    ///   ``PJSUAUsageError/invalidCallState(_:_:)`` when the call is not confirmed;
    ///   ``PJSUAError`` when the stream has no telephone-event payload negotiated.
    public func sendDTMF(
        _ call: Call, digits: String, method: DTMFMethod = .rfc4733, duration: Duration = .milliseconds(160)
    ) throws {
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
        try Native.sendDTMF(
            try confirmedSlot(call), digits: normalized, method: method, milliseconds: Int(milliseconds))
        if method == .rfc4733 {
            let now = ContinuousClock.now
            dtmfDrainEstimates = dtmfDrainEstimates.filter { $0.value > now }
            let perDigit = max(duration, .milliseconds(200)) + .milliseconds(80)
            let start = max(dtmfDrainEstimates[call] ?? now, now)
            dtmfDrainEstimates[call] = start + perDigit * normalized.count
        }
    }

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
        runtime.bridge.transferHandler.withLock { $0 = handler }
    }

    /// Decides how INVITEs with `Replaces` (RFC 3891) for our calls are answered. Without a
    /// handler (the default) every one is accepted: the engine answers the new call as the
    /// replaced call was answered (200 for a confirmed call) and ends the replaced call.
    /// pjsip itself answers a `Replaces` that matches no call 481, and one for a call
    /// already ended 603, without asking; so does the engine for a call the app has hung up
    /// whose BYE is still unanswered (RFC 3891 §3: that dialog has terminated).
    ///
    /// An accepted replacement is reported as ``PJSUAEvent/incomingCall(_:)`` with
    /// ``IncomingCall/replaces`` naming the replaced call, its ``CallState/incoming`` event,
    /// then ``PJSUAEvent/callReplaced(_:)``, before the replaced call's
    /// ``CallState/disconnected``. A refused one gets the handler's status code, and no
    /// event: the replaced call stays as it was.
    ///
    /// The handler runs on a pjsua thread while pjsua waits for the answer: it must return
    /// quickly and must not call into the engine. Wraps `on_call_replace_request2`.
    /// - Parameter handler: returns ``ReplaceDecision/accept`` or
    ///   ``ReplaceDecision/reject(statusCode:)`` (400–699); `nil` accepts all.
    /// - Throws: ``PJSUAUsageError`` when the engine is not running (the handler lasts until
    ///   shutdown).
    public func setReplaceRequestHandler(_ handler: (@Sendable (ReplaceRequest) -> ReplaceDecision)?) throws {
        let runtime = try runtime()
        runtime.bridge.replaceHandler.withLock { $0 = handler }
    }

    // MARK: Conference

    /// Joins the calls' audio locally: each call hears every other (a 3-way call with two).
    /// The links are kept and re-applied whenever a call's media changes (a re-INVITE
    /// that changes port or codec) until ``leaveConference(_:)`` or the call ends.
    /// Wraps `pjsua_conf_connect`.
    /// - Parameter calls: two or more live calls.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``.
    public func joinConference(_ calls: [Call]) throws {
        let runtime = try runtime()
        for call in calls { _ = try liveSlot(call) }
        Native.join(bridge: runtime.bridge, calls: calls)
    }

    /// Takes a call out of every conference link. Wraps `pjsua_conf_disconnect`.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``.
    public func leaveConference(_ call: Call) throws {
        let runtime = try runtime()
        _ = try liveSlot(call)
        Native.leave(bridge: runtime.bridge, call: call)
    }

    // MARK: Codecs

    /// The codecs pjproject provides (Opus, PCMU/PCMA, G.722, GSM, Speex, iLBC… as built),
    /// highest priority first. Wraps `pjsua_enum_codecs`.
    /// - Throws: ``PJSUAUsageError`` when not running.
    public func codecs() throws -> [CodecInfo] {
        _ = try runtime()
        return try Native.codecs().sorted { $0.priority > $1.priority }
    }

    /// Sets a codec's priority for new offers and answers; 0 disables it.
    /// Wraps `pjsua_codec_set_priority`.
    /// - Parameters:
    ///   - id: a codec id or its prefix (`PCMU`, `opus/48000`); every codec that matches is set.
    ///   - priority: 0–255, higher first.
    /// - Throws: ``PJSUAUsageError/invalidArgument(_:)`` for a priority outside 0–255
    ///   or an empty id;
    ///   ``PJSUAError`` with ``PJSUAError/Code/notFound`` for an unknown codec.
    public func setCodecPriority(_ id: String, _ priority: Int) throws {
        _ = try runtime()
        guard (0...255).contains(priority) else {
            throw PJSUAUsageError.invalidArgument("codec priority must be 0...255, got \(priority)")
        }
        // pjsua matches ids by prefix: an empty one would set every codec.
        guard !id.isEmpty else { throw PJSUAUsageError.invalidArgument("empty codec id") }
        try Native.setCodecPriority(id, priority)
    }

    // MARK: Quality

    /// Periodic RTP/RTCP statistics of a call's first audio stream, ending with the call.
    ///
    /// Yields a ``StreamStatistics`` snapshot every `interval` while the call has media and
    /// finishes right after the call's terminal event (or at once for an ended call). Keeps
    /// only the newest snapshot for a slow consumer. Wraps `pjsua_call_get_stream_stat`.
    /// - Parameters:
    ///   - call: the call to sample.
    ///   - interval: the sampling period, at least 10 ms.
    public nonisolated func quality(of call: Call, every interval: Duration = .seconds(1)) -> AsyncStream<
        StreamStatistics
    > {
        let events = events(for: call)
        let period = max(interval, .milliseconds(10))
        let (stream, continuation) = AsyncStream.makeStream(
            of: StreamStatistics.self, bufferingPolicy: .bufferingNewest(1))
        let sampler = Task { [weak self] in
            await withTaskGroup(of: Void.self) { group in
                // Ends the sampling when the call's event stream ends.
                group.addTask { for await _ in events {} }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: period)
                        guard let engine = self, !Task.isCancelled else { return }
                        do {
                            continuation.yield(try await engine.streamStatistics(call))
                        } catch PJSUAUsageError.unknownCall {
                            return
                        } catch {
                            // No media yet (or held without a stream): try again next period.
                        }
                    }
                }
                await group.next()
                group.cancelAll()
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in sampler.cancel() }
        return stream
    }
}

/// The far end of a call's dialog, as an attended transfer's Refer-To names it.
struct ReplacesTarget: Sendable, Hashable {
    /// The remote Contact URI, as pjsip prints a Request-URI.
    var contact: String
    var callID: String
    /// Our tag in the dialog, and the far end's.
    var localTag: String
    var remoteTag: String

    /// `<contact?Require=replaces&Replaces=...>`: the Replaces value `callid;to-tag=remote;
    /// from-tag=local` from the far end's view, which is how the INVITE it receives must
    /// name the dialog (RFC 3891 §3), with every character outside a header value's
    /// `hnv-unreserved` and `unreserved` sets percent-escaped (RFC 3261 §25.1).
    var referTo: String {
        let replaces = "\(callID);to-tag=\(remoteTag);from-tag=\(localTag)"
        let separator = contact.contains("?") ? "&" : "?"
        return "<\(contact)\(separator)Require=replaces&Replaces=\(Self.escapedHeaderValue(replaces))>"
    }

    /// `text` with every byte outside `hnv-unreserved` / `unreserved` as `%XX`.
    static func escapedHeaderValue(_ text: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'()[]/?:+$".utf8)
        var result = ""
        for byte in text.utf8 {
            if allowed.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }
}
