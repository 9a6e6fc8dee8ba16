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
