import CPJSUAShim

/// A call's state without the rest of its snapshot.
struct NativeCallState {
    var role: CallRole
    var state: CallState
    var sipCallID: String
    var statusCode: Int
    var reason: String
}

extension Native {
    /// Reads only what a state event or a state check needs from `pjsua_call_info`, skipping
    /// the address parsing, media list and codec lookup of ``readCallInfo(_:call:)``: it runs
    /// for every state change of every call and before every answer.
    static func readCallState(_ slot: pjsua_call_id, call: Call) -> NativeCallState? {
        let raw = UnsafeMutablePointer<pjsua_call_info>.allocate(capacity: 1)
        defer { raw.deallocate() }
        guard pjsua_call_get_info(slot, raw) == cpj_success() else { return nil }
        return NativeCallState(
            role: raw.pointee.role == PJSIP_ROLE_UAC ? .caller : .callee,
            state: CallState(native: raw.pointee.state),
            sipCallID: fullCallID(PJ.string(raw.pointee.call_id), of: call),
            statusCode: Int(raw.pointee.last_status.rawValue),
            reason: PJ.string(raw.pointee.last_status_text))
    }
}

extension CallState {
    init(native: pjsip_inv_state) {
        switch native {
        case PJSIP_INV_STATE_CALLING: self = .calling
        case PJSIP_INV_STATE_INCOMING: self = .incoming
        case PJSIP_INV_STATE_EARLY: self = .early
        case PJSIP_INV_STATE_CONNECTING: self = .connecting
        case PJSIP_INV_STATE_CONFIRMED: self = .confirmed
        case PJSIP_INV_STATE_DISCONNECTED: self = .disconnected
        default: self = .null
        }
    }
}
