import CPJSUAShim

/// The messages capability's state on the bridge: sends waiting for their final response,
/// by the token passed to pjsua as the request's user data.
struct MessagesState {
    var pending: [UInt64: CheckedContinuation<MessageDelivery, any Error>] = [:]
    /// Sends inside `pjsua_im_send` now, with the final response if one came meanwhile.
    /// pjsip ends a request it could not send (too long, no transport) with a local final
    /// status through the callback and only then returns the error: the error decides.
    var sending: [UInt64: MessageDelivery?] = [:]

    /// Takes every waiting send out (at shutdown, to fail them).
    mutating func takeAll() -> [CheckedContinuation<MessageDelivery, any Error>] {
        defer { pending = [:] }
        return Array(pending.values)
    }

    /// The callback's final response for `token`: the waiting send to resume, or nil when
    /// there is none or its `pjsua_im_send` has not returned yet (the response is kept).
    mutating func finish(_ token: UInt64, with delivery: MessageDelivery) -> CheckedContinuation<
        MessageDelivery, any Error
    >? {
        if sending[token] != nil {
            sending[token] = .some(delivery)
            return nil
        }
        return pending.removeValue(forKey: token)
    }
}

/// The live streams of one kind of incoming request the engine takes only with consent,
/// process-wide like pjsua. Their count is what the C module (im_consent.c) reads to decide
/// between pjsua's 200 and a refusal.
final class Consumers<Event: Sendable>: Sendable {
    private let streams = Protected<(next: UInt64, all: [UInt64: AsyncStream<Event>.Continuation])>((0, [:]))
    /// Tells the C module the new count.
    private let publish: @Sendable (Int32) -> Void

    init(publish: @escaping @Sendable (Int32) -> Void) {
        self.publish = publish
    }

    func subscribe() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream()
        let id = streams.withLock { state -> UInt64 in
            state.next += 1
            state.all[state.next] = continuation
            publish(Int32(state.all.count))
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.streams.withLock { state in
                state.all[id] = nil
                self.publish(Int32(state.all.count))
            }
        }
        return stream
    }

    /// Yields to every live stream; `false` when there is none.
    @discardableResult
    func deliver(_ event: Event) -> Bool {
        streams.withLock { state in
            for continuation in state.all.values { continuation.yield(event) }
            return !state.all.isEmpty
        }
    }
}

/// The consumers of each kind, process-wide.
enum ConsentStreams {
    /// ``PJSUA/messages``: MESSAGE is refused 480 without one.
    static let messages = Consumers<MessageEvent> { cpj_im_set_consumer_count($0) }
    /// ``PJSUA/messageSummaries``: an unsolicited message-summary NOTIFY is refused 481
    /// without one.
    static let summaries = Consumers<MessageSummary> { cpj_mwi_set_consumer_count($0) }
    /// ``PJSUA/watcherRequests``: reports only (the account's policy decides).
    static let watchers = Consumers<WatcherRequest> { _ in }
}

extension Native {
    /// `pjsua_im_send` with the token as user data (``onPagerStatus`` finds the waiting send by it).
    static func sendMessage(
        _ body: String, to uri: String, from account: pjsua_acc_id, contentType: String, headers: [SIPHeader],
        token: UInt64
    ) throws(PJSUAError) {
        let scope = StringScope()
        var target = scope.pj(uri)
        var mime = scope.pj(contentType)
        var content = scope.pj(body)
        let status = withMessageData(headers) { data in
            pjsua_im_send(account, &target, &mime, &content, data, UnsafeMutableRawPointer(bitPattern: UInt(token)))
        }
        try PJ.check(status, "pjsua_im_send", subject: uri)
    }

    /// `pjsua_im_typing`.
    static func sendTyping(_ isTyping: Bool, to uri: String, from account: pjsua_acc_id) throws(PJSUAError) {
        let status = PJ.withPJString(uri) { target in
            var target = target
            return pjsua_im_typing(account, &target, isTyping ? 1 : 0, nil)
        }
        try PJ.check(status, "pjsua_im_typing", subject: uri)
    }

    /// The sender as a ``SIPAddress``: pjsua prints the From header (display-name and URI).
    fileprivate static func sender(_ from: UnsafePointer<pj_str_t>?) -> SIPAddress {
        SIPAddress(parsing: from.map { PJ.string($0.pointee) } ?? "")
    }

    /// The `charset` parameter of the Content-Type header (`c` in compact form), lower-cased
    /// and unquoted; pjsua's own media type has only `type/subtype`.
    static func charset(in headers: [SIPHeader]) -> String? {
        guard let value = headers.first(where: { ["content-type", "c"].contains($0.name.lowercased()) })?.value
        else { return nil }
        for parameter in value.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingWhitespace().lowercased() == "charset" else { continue }
            let text = pair[1].trimmingWhitespace()
            let quoted = text.count >= 2 && text.hasPrefix("\"") && text.hasSuffix("\"")
            let unquoted = quoted ? text.dropFirst().dropLast() : Substring(text)
            return unquoted.isEmpty ? nil : unquoted.lowercased()
        }
        return nil
    }

    fileprivate static func callHandle(_ slot: pjsua_call_id) -> Call? {
        slot == pjsua_call_id(cpj_invalid_id()) ? nil : Handles.call(slot)
    }
}

// MARK: - C callbacks (pjsua's threads; they copy and hand over, never block)

func onPager(
    _ callSlot: pjsua_call_id, _ from: UnsafePointer<pj_str_t>?, _ to: UnsafePointer<pj_str_t>?,
    _ contact: UnsafePointer<pj_str_t>?, _ mime: UnsafePointer<pj_str_t>?, _ body: UnsafePointer<pj_str_t>?,
    _ rdata: UnsafeMutablePointer<pjsip_rx_data>?, _ accountSlot: pjsua_acc_id
) {
    let contactText = contact.map { PJ.string($0.pointee) } ?? ""
    let headers = rdata.map(Native.headers(of:)) ?? []
    let message = IncomingMessage(
        account: Handles.account(accountSlot), call: Native.callHandle(callSlot), from: Native.sender(from),
        to: SIPAddress(parsing: to.map { PJ.string($0.pointee) } ?? "").uri,
        contact: contactText.isEmpty ? nil : SIPAddress(parsing: contactText).uri,
        contentType: mime.map { PJ.string($0.pointee) } ?? "", body: body.map { PJ.string($0.pointee) } ?? "",
        headers: headers, charset: Native.charset(in: headers))
    ConsentStreams.messages.deliver(.message(message))
}

func onPagerStatus(
    _ callSlot: pjsua_call_id, _ to: UnsafePointer<pj_str_t>?, _ body: UnsafePointer<pj_str_t>?,
    _ userData: UnsafeMutableRawPointer?, _ status: pjsip_status_code, _ reason: UnsafePointer<pj_str_t>?,
    _ tdata: UnsafeMutablePointer<pjsip_tx_data>?, _ rdata: UnsafeMutablePointer<pjsip_rx_data>?,
    _ accountSlot: pjsua_acc_id
) {
    guard let bridge = EngineBridge.active(), let userData else { return }
    let token = UInt64(UInt(bitPattern: userData))
    let delivery = MessageDelivery(statusCode: Int(status.rawValue), reason: reason.map { PJ.string($0.pointee) } ?? "")
    // pjsua reports only final responses here (and retries a challenge itself).
    guard delivery.statusCode >= 200 else { return }
    guard let waiting = bridge.messages.withLock({ $0.finish(token, with: delivery) }) else { return }
    // pjsua_destroy ends the transactions still running with a local 503; no far end said it.
    if bridge.isDestroying.withLock({ $0 }) {
        waiting.resume(throwing: PJSUAUsageError.shutDown)
    } else {
        waiting.resume(returning: delivery)
    }
}

func onTyping(
    _ callSlot: pjsua_call_id, _ from: UnsafePointer<pj_str_t>?, _ to: UnsafePointer<pj_str_t>?,
    _ contact: UnsafePointer<pj_str_t>?, _ isTyping: pj_bool_t, _ rdata: UnsafeMutablePointer<pjsip_rx_data>?,
    _ accountSlot: pjsua_acc_id
) {
    let indication = TypingIndication(
        account: Handles.account(accountSlot), call: Native.callHandle(callSlot), from: Native.sender(from),
        isTyping: isTyping != 0)
    ConsentStreams.messages.deliver(.typing(indication))
}

/// `on_mwi_info`: a message-summary NOTIFY, on the account's subscription (`evsub` set) or
/// unsolicited (reached here only while a summaries stream is alive, see im_consent.c).
func onMessageWaitingInfo(_ accountSlot: pjsua_acc_id, _ info: UnsafeMutablePointer<pjsua_mwi_info>?) {
    guard let info else { return }
    let body = PJ.string(cpj_rdata_body(info.pointee.rdata))
    let summary = MessageSummary(
        parsing: body, account: Handles.account(accountSlot), isSolicited: info.pointee.evsub != nil)
    ConsentStreams.summaries.deliver(summary)
}
