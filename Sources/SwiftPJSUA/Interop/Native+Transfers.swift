import CPJSIP

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
