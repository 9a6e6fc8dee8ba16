import CPJSUAShim

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Transfers we asked for: Timer N (RFC 6665 §4.1.2.4)

extension Native {
    /// RFC 6665 §4.1.2.4's Timer N for the REFER just sent: 64 × T1 (the process's current T1,
    /// ``SIPTimers/t1``) from now. When it fires before any NOTIFY of the REFER's implicit
    /// subscription has arrived (RFC 3515 §2.4.4: the far end must send one at once), the
    /// subscription has failed and the REFER resolves with 408. Runs on the engine thread;
    /// the timer fires on a pjsua worker thread.
    static func startTimerN(forTransfer id: UInt64) {
        let t1 = pjsip_cfg().map { Int($0.pointee.tsx.t1) } ?? 500
        let token = UnsafeMutableRawPointer(bitPattern: UInt(id))
        _ = cpj_schedule_timer(
            { token in timerNFired(UInt64(UInt(bitPattern: token))) }, token, UInt32(clamping: 64 * t1))
    }
}

/// Timer N of REFER `id` fired: the hub resolves it if it is still waiting for a first NOTIFY.
private func timerNFired(_ id: UInt64) {
    guard let bridge = EngineBridge.active() else { return }
    bridge.hub.expireTransfer(id: id, reason: PJSUA.transferTimeoutReason)
}

/// Whether the transaction event pjsua reported last on this thread (`on_call_tsx_state`)
/// belonged to another dialog than the one of the call now in its slot.
///
/// pjsua reports a REFER's 202 and NOTIFYs through `on_call_transfer_status` with the slot
/// only, and an ended call's REFER subscription still names its old slot, which a newer call
/// may hold. For each of those messages pjsip first reports the transaction (to
/// `on_call_tsx_state`, through the INVITE session's dialog usage, which comes before the
/// subscription's) and then, on the same thread under the same dialog lock, the transfer
/// status: the transaction says whose dialog it is.
enum TransactionOrigin {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Records that a transaction event for `slot` belonged (or not) to that call's dialog.
    static func note(slot: pjsua_call_id, foreign: Bool) {
        let value = (UInt(UInt32(bitPattern: slot)) &+ 1) << 1 | (foreign ? 1 : 0)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: value))
    }

    /// Whether the last transaction event on this thread was for `slot` and belonged to
    /// another dialog.
    static func wasForeign(slot: pjsua_call_id) -> Bool {
        let value = UInt(bitPattern: pthread_getspecific(key))
        return value & 1 == 1 && value >> 1 == UInt(UInt32(bitPattern: slot)) &+ 1
    }
}

extension Native {
    // MARK: REFER

    static func transfer(_ slot: pjsua_call_id, to uri: String, headers: [SIPHeader]) throws(PJSUAError) {
        let status = PJ.withPJString(uri) { target in
            var target = target
            return withMessageData(headers) { pjsua_call_xfer(slot, &target, $0) }
        }
        try PJ.check(status, "pjsua_call_xfer")
    }

    /// REFER on `slot` whose Refer-To is `other`'s remote Contact with a `Replaces` for
    /// `other`'s dialog (see ``ReplacesTarget``), sent with `pjsua_call_xfer`.
    static func transfer(
        _ slot: pjsua_call_id, replacing other: pjsua_call_id, headers: [SIPHeader]
    ) throws(PJSUAError) {
        let target = try dialogIdentity(other)
        try transfer(slot, to: target.referTo, headers: headers)
    }

    /// The remote Contact, Call-ID and tags of the call's dialog, read under its lock.
    static func dialogIdentity(_ slot: pjsua_call_id) throws(PJSUAError) -> ReplacesTarget {
        // Room for a Contact URI and three dialog strings well beyond what a UDP message holds.
        var buffer = [CChar](repeating: 0, count: 16_384)
        var lengths: [Int32] = [0, 0, 0, 0]
        let status = buffer.withUnsafeMutableBufferPointer { bytes in
            lengths.withUnsafeMutableBufferPointer {
                cpj_call_dialog_identity(slot, bytes.baseAddress, pj_size_t(bytes.count), $0.baseAddress)
            }
        }
        try PJ.check(status, "pjsua_call_xfer")
        var parts: [String] = []
        var start = 0
        buffer.withUnsafeBufferPointer { bytes in
            for length in lengths.map(Int.init) {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<start + length])
                parts.append(String(decoding: UnsafeRawBufferPointer(slice), as: UTF8.self))
                start += length
            }
        }
        return ReplacesTarget(contact: parts[0], callID: parts[1], localTag: parts[2], remoteTag: parts[3])
    }
}

func onTransferStatus(
    _ slot: pjsua_call_id, _ code: Int32, _ text: UnsafePointer<pj_str_t>?, _ final: pj_bool_t,
    _ proceed: UnsafeMutablePointer<pj_bool_t>?
) {
    // A REFER answered after its call ended arrives with the slot the call had (pjsua keeps
    // a pointer to the slot in the subscription): look the call up, never mint one. The hub
    // delivers only what a pending REFER of that call waits for, once final.
    // With the slot reused, the transaction pjsip reported just before says whose it is.
    guard let bridge = EngineBridge.active(), !TransactionOrigin.wasForeign(slot: slot),
        let call = Handles.liveCall(slot),
        bridge.hub.emit(
            .transferStatus(
                TransferProgress(
                    call: call, statusCode: Int(code), reason: text.map { PJ.string($0.pointee) } ?? "",
                    isFinal: final != 0))),
        final == 0, code < 200
    else {
        // Resolved, or nobody waits for it: pjsua stops reporting this subscription.
        proceed?.pointee = 0
        return
    }
}

/// Asks the app's transfer handler (if any) whether to accept, and reports the answer.
func onTransferRequest(
    _ slot: pjsua_call_id, _ target: UnsafePointer<pj_str_t>?, _ code: UnsafeMutablePointer<pjsip_status_code>?,
    _ setting: UnsafeMutablePointer<pjsua_call_setting>?
) {
    guard let bridge = EngineBridge.active(), let code else { return }
    guard let call = Handles.liveCall(slot) else {
        // No call holds the slot any more: 481 Call/Transaction Does Not Exist.
        code.pointee = pjsip_status_code(rawValue: 481)
        return
    }
    let request = TransferRequest(call: call, target: target.map { PJ.string($0.pointee) } ?? "")
    let handler = bridge.calls.withLock { $0.transferHandler }
    if case .reject(let status) = handler?(request) ?? .accept {
        code.pointee = pjsip_status_code(rawValue: UInt32(max(400, min(699, status))))
    }
    if let setting {
        // The new call is audio only, like every call the engine makes.
        cpj_call_setting_audio_only(setting)
    }
    bridge.hub.emit(
        .transferRequest(
            TransferRequestAnswer(
                call: call, target: request.target, statusCode: Int(code.pointee.rawValue))))
}
