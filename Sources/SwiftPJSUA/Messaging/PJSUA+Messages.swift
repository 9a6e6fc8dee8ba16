extension PJSUA {
    // MARK: Messages (RFC 3428) and typing indications (RFC 3994)

    /// The reason phrase of the `480` an incoming MESSAGE gets while no ``messages`` stream
    /// is subscribed.
    public static let noMessageConsumerReason = "No Message Consumer"

    /// Incoming MESSAGE requests and typing indications, from the moment of this access on,
    /// in order, none dropped.
    ///
    /// **Consent to deliver.** pjsua by itself answers every MESSAGE `200 OK` whether or not
    /// anything reads it. The engine instead takes a MESSAGE, inside a call's dialog or
    /// outside any, only while at least one `messages` stream is alive: then it answers `200`
    /// and yields the message to every live stream; with none, the sender gets
    /// `480 Temporarily Unavailable` (``noMessageConsumerReason``), the call (if any) is not
    /// affected, and nothing is kept. A stream counts from this access until it is finished
    /// or its iterating task is cancelled.
    ///
    /// Each access is a new unbounded subscription; the streams do not end when the engine
    /// shuts down (a later `start` delivers to them again). Wraps pjsua's `on_pager2` and
    /// `on_typing2` callbacks. Safe from any thread.
    public nonisolated var messages: AsyncStream<MessageEvent> { ConsentStreams.messages.subscribe() }

    /// Sends a MESSAGE (RFC 3428) outside any dialog and returns its final response.
    ///
    /// The request goes through the account's outbound proxy and route set, and is
    /// authenticated with its credentials when challenged. The call returns when the final
    /// response arrives: pjsip's transaction timer bounds it (408 after 64 × T1, 32 s by
    /// default). Wraps `pjsua_im_send`.
    /// - Parameters:
    ///   - body: the content, sent as UTF-8.
    ///   - uri: the recipient, a SIP or SIPS URI.
    ///   - account: the account whose identity (From) and route it uses.
    ///   - contentType: the body's media type as `type/subtype` (default `text/plain`).
    ///   - headers: extra headers for the request.
    /// - Returns: the final status and reason: ``MessageDelivery/isAccepted`` for a 2xx.
    /// - Throws: ``PJSUAUsageError/invalidURI(_:)``; ``PJSUAUsageError/invalidArgument(_:)``
    ///   for a content type that is not `type/subtype`; ``PJSUAUsageError/invalidHeader(_:)``;
    ///   ``PJSUAUsageError/unknownAccount(_:)``; ``PJSUAUsageError/shutDown`` when the engine
    ///   shuts down before the response; ``PJSUAError`` when pjsua refuses to send or pjsip
    ///   could not send it (``PJSUAError/Code/messageTooLong`` above
    ///   ``BuildLimits/sipMessageBytes``), never a local status dressed as the far end's.
    public func sendMessage(
        _ body: String, to uri: String, from account: Account, contentType: String = "text/plain",
        headers: [SIPHeader] = []
    ) async throws -> MessageDelivery {
        let bridge = try runtime().bridge
        guard Native.isValidSIPURI(uri) else { throw PJSUAUsageError.invalidURI(uri) }
        try Self.validateContentType(contentType)
        try Self.validateHeaders(headers)
        let slot = try liveSlot(account)
        let token = nextGeneration()
        return try await withCheckedThrowingContinuation { continuation in
            // Registered before sending: the response can arrive on pjsua's thread before
            // pjsua_im_send returns here.
            bridge.messages.withLock { state in
                state.pending[token] = continuation
                state.sending[token] = .some(nil)
            }
            do {
                try Native.sendMessage(
                    body, to: uri, from: slot, contentType: contentType, headers: headers, token: token)
                // A response that came while pjsua_im_send ran was kept for now.
                let early = bridge.messages.withLock {
                    state -> (MessageDelivery, CheckedContinuation<MessageDelivery, any Error>)? in
                    guard case .some(.some(let delivery)) = state.sending.removeValue(forKey: token),
                        let waiting = state.pending.removeValue(forKey: token)
                    else { return nil }
                    return (delivery, waiting)
                }
                early.map { $0.1.resume(returning: $0.0) }
            } catch {
                // pjsip's local final status for a request it never sent is not the far end's answer.
                let waiting = bridge.messages.withLock { state in
                    state.sending[token] = nil
                    return state.pending.removeValue(forKey: token)
                }
                waiting?.resume(throwing: error)
            }
        }
    }

    /// Sends a typing indication (RFC 3994) outside any dialog: `active` while the user
    /// composes, `idle` when they stop. Its response is not reported. Wraps `pjsua_im_typing`.
    /// - Parameters:
    ///   - isTyping: `true` for `active`, `false` for `idle`.
    ///   - uri: the recipient, a SIP or SIPS URI.
    ///   - account: the account whose identity and route it uses.
    /// - Throws: ``PJSUAUsageError/invalidURI(_:)``; ``PJSUAUsageError/unknownAccount(_:)``;
    ///   ``PJSUAError`` when pjsua refuses to send.
    public func sendTypingIndication(_ isTyping: Bool, to uri: String, from account: Account) throws {
        _ = try runtime()
        guard Native.isValidSIPURI(uri) else { throw PJSUAUsageError.invalidURI(uri) }
        let slot = try liveSlot(account)
        try Native.sendTyping(isTyping, to: uri, from: slot)
    }

    /// `type/subtype`, each a non-empty RFC 3261 token.
    static func validateContentType(_ contentType: String) throws(PJSUAUsageError) {
        let parts = contentType.split(separator: "/", omittingEmptySubsequences: false)
        let token = { (part: Substring) in
            !part.isEmpty && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-.!%*_+`'~".contains($0)) }
        }
        guard parts.count == 2, token(parts[0]), token(parts[1]) else {
            throw .invalidArgument("content type \"\(contentType)\" is not type/subtype")
        }
    }
}
