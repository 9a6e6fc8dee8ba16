extension PJSUA {
    // MARK: Calls

    /// Places a call: sends an INVITE to `uri` from `account`.
    ///
    /// Returns once the INVITE is on its way (state ``CallState/calling``). Its events arrive
    /// on ``events``; to get them on a stream of this call alone, from its first state, place
    /// it with ``placeCall(to:from:headers:)`` instead. Wraps `pjsua_call_make_call`.
    /// - Parameters:
    ///   - uri: the target SIP or SIPS URI, for example `sip:bob@example.com`.
    ///   - account: the account the call is made from.
    ///   - headers: extra headers for the INVITE, for example `X-Campaign: 7`.
    /// - Returns: the call's handle.
    /// - Throws: ``PJSUAUsageError/invalidURI(_:)`` when `uri` does not parse;
    ///   ``PJSUAUsageError/invalidHeader(_:)``; ``PJSUAUsageError/unknownAccount(_:)``;
    ///   ``PJSUAError`` with code ``PJSUAError/Code/tooMany`` at the configured call limit
    ///   (``Configuration/maxCalls``), or another pjsua failure.
    public func makeCall(to uri: String, from account: Account, headers: [SIPHeader] = []) throws -> Call {
        let accountSlot = try liveSlot(account)
        guard Native.isValidSIPURI(uri) else { throw PJSUAUsageError.invalidURI(uri) }
        try Self.validateHeaders(headers)
        return try Native.makeCall(to: uri, from: accountSlot, headers: headers + policyHeaders(of: account))
    }

    /// The engine's private headers for an INVITE or answer of `account` (`nil`: unknown, or a
    /// local account): the marker that takes `100rel` and `timer` out of `Supported` when the
    /// account's ``AccountConfiguration/reliableProvisionals`` or
    /// ``AccountConfiguration/sessionTimers`` turns them off (pjsua advertises both for every
    /// account).
    func policyHeaders(of account: Account?) throws -> [SIPHeader] {
        guard let account, let configuration = try runtime().bridge.accountRecords.configuration(of: account) else {
            return []
        }
        var tags: [String] = []
        if configuration.reliableProvisionals == .off { tags.append("100rel") }
        if configuration.sessionTimers.mode == .off { tags.append("timer") }
        return tags.isEmpty ? [] : [Native.dropSupportedMarker(tags)]
    }

    /// Throws for a header whose name is not an RFC 3261 token, whose value could break out
    /// of its line, that pjsip writes itself (a second `CSeq`, `Call-ID`, `Via`… would make
    /// the message invalid), or whose value pjsip's parser rejects for a header it knows.
    static func validateHeaders(_ headers: [SIPHeader]) throws(PJSUAUsageError) {
        let token = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.!%*_+`'~")
        for header in headers {
            guard !header.name.isEmpty, header.name.allSatisfy(token.contains),
                !header.value.containsLineBreakOrControl,
                !managedHeaderNames.contains(header.name.lowercased()),
                // A value pjsip's parser rejects (`Expires: soon`) would get the request
                // dropped unanswered by a pjsip peer.
                Native.headerParses(name: header.name, value: header.value)
            else { throw .invalidHeader("\(header.name): \(header.value)") }
        }
    }

    /// Headers pjsip builds for every request or response (full and compact forms), which
    /// an app must not add a second time.
    static let managedHeaderNames: Set<String> = [
        "via", "v", "from", "f", "to", "t", "call-id", "i", "cseq", "max-forwards", "content-length", "l",
        "content-type", "c", "contact", "m", "route", "record-route",
        // The engine's own carrier of REGISTER push parameters (cpj_register_push_contact_module).
        "x-swiftpjsua-contact-uri-params",
        // The engine's marker for an account with 100rel or timers off (supported_tags.c).
        "x-swiftpjsua-drop-supported",
    ]

    /// Answers an incoming call with a provisional (180, 183) or final (200–699) response.
    ///
    /// 180 rings, 183 answers with session progress (early media, SDP included), 200 accepts,
    /// 3xx–6xx reject. Wraps `pjsua_call_answer2`.
    /// - Parameters:
    ///   - call: an unanswered incoming call.
    ///   - statusCode: the SIP status to send, 100–699.
    ///   - headers: extra headers for the response.
    /// - Throws: ``PJSUAUsageError/invalidStatusCode(_:)`` outside 100–699;
    ///   ``PJSUAUsageError/invalidHeader(_:)``;
    ///   ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAUsageError/invalidCallState(_:_:)`` when
    ///   the call is not an unanswered incoming call; ``PJSUAError`` with code `.tooMany` for a
    ///   183 or 2xx while the conference bridge has no free slot for the call's audio (the
    ///   call keeps ringing: reject it, or free a player, recorder, tone or frame stream
    ///   first); ``PJSUAError`` when pjsua refuses.
    public func answer(_ call: Call, statusCode: Int = 200, headers: [SIPHeader] = []) throws {
        guard (100...699).contains(statusCode) else { throw PJSUAUsageError.invalidStatusCode(statusCode) }
        try Self.validateHeaders(headers)
        let slot = try liveSlot(call)
        if let info = Native.readCallState(slot, call: call),
            info.role != .callee || ![.incoming, .early].contains(info.state)
        {
            throw PJSUAUsageError.invalidCallState(call, info.state)
        }
        // A network change since the INVITE arrived: the answer names the current Contact.
        // The arrival and the change count are read under one lock.
        let moved = try runtime().bridge.network.withLock { $0.changed(sinceArrivalOf: call) }
        let account = try runtime().bridge.calls.withLock { $0.callAccounts[call.generation] }
        try Native.answer(
            slot, statusCode: statusCode, headers: headers + policyHeaders(of: account), refreshingContact: moved)
    }

    /// Ends a call: CANCEL before an answer, a final response to an unanswered incoming
    /// call, BYE once established. Wraps `pjsua_call_hangup`.
    /// - Parameters:
    ///   - call: the call to end.
    ///   - statusCode: for an unanswered incoming call, the final response (300–699); `nil`
    ///     lets pjsua choose (603 for incoming, otherwise the BYE/CANCEL).
    ///   - headers: extra headers for the BYE, CANCEL or final response.
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)``; ``PJSUAUsageError/invalidStatusCode(_:)``;
    ///   ``PJSUAUsageError/invalidHeader(_:)``.
    public func hangup(_ call: Call, statusCode: Int? = nil, headers: [SIPHeader] = []) throws {
        if let statusCode, !(300...699).contains(statusCode) {
            throw PJSUAUsageError.invalidStatusCode(statusCode)
        }
        try Self.validateHeaders(headers)
        let slot = try liveSlot(call)
        try Native.hangup(slot, statusCode: statusCode ?? 0, headers: headers)
    }

    /// Ends every call. Does nothing when the engine is not running: it then has no calls.
    /// Wraps `pjsua_call_hangup_all`.
    public func hangupAll() {
        guard isRunning else { return }
        Native.hangupAll()
    }

    /// A snapshot of a call. Wraps `pjsua_call_get_info` (and `pjsua_call_get_stream_info`
    /// for the codec).
    /// - Throws: ``PJSUAUsageError/unknownCall(_:)`` when the call has ended.
    public func callInfo(_ call: Call) throws(PJSUAUsageError) -> CallInfo {
        let slot = try liveSlot(call)
        guard let info = Native.readCallInfo(slot, call: call) else { throw PJSUAUsageError.unknownCall(call) }
        return info.info
    }

    /// Calls that have started and not yet reported their terminal event.
    public func activeCalls() throws(PJSUAUsageError) -> [Call] {
        try runtime().bridge.hub.liveCalls.keys.sorted { $0.generation < $1.generation }
    }

    /// The slot of a confirmed call, or a typed error.
    func confirmedSlot(_ call: Call) throws -> Int32 {
        let slot = try liveSlot(call)
        guard let info = Native.readCallInfo(slot, call: call) else { throw PJSUAUsageError.unknownCall(call) }
        guard info.state == .confirmed else { throw PJSUAUsageError.invalidCallState(call, info.state) }
        return slot
    }
}
