import CPJSUAShim

/// An accepted INVITE with `Replaces`, between pjsua's replace-request and replaced-call
/// callbacks.
struct PendingReplacement: Sendable {
    var account: Account
    var sipCallID: String
    var from: SIPAddress
    var headers: [SIPHeader]
}

/// An INVITE with `Replaces` (RFC 3891) for the call in `slot`: asks the app's replace
/// handler (if any), keeps what the new call's report needs, and refuses a replacement no
/// account could take.
func onCallReplaceRequest(
    _ slot: pjsua_call_id, _ rdata: UnsafeMutablePointer<pjsip_rx_data>?, _ code: UnsafeMutablePointer<Int32>?,
    _ text: UnsafeMutablePointer<pj_str_t>?, _ setting: UnsafeMutablePointer<pjsua_call_setting>?
) {
    guard let bridge = EngineBridge.active(), let code else { return }
    let replaced = Handles.call(slot)
    let headers = rdata.map(Native.headers(of:)) ?? []
    let from = headers.first { ["from", "f"].contains($0.name.lowercased()) }.map { SIPAddress(parsing: $0.value) }
    let sipCallID = rdata.map { PJ.string(cpj_rdata_call_id($0)) } ?? ""
    if let setting {
        // pjsua copied the replaced call's settings; the new call is audio only all the same.
        cpj_call_setting_audio_only(setting)
    }
    // The account the replaced call was first seen with, if it still exists (reading the call's
    // info here would take its dialog lock while pjsua holds its own), and the app's handler.
    let (recorded, handler) = bridge.calls.withLock { ($0.callAccounts[replaced.generation], $0.replaceHandler) }
    let account = recorded.flatMap { Handles.account($0.slot) == $0 ? $0 : nil }
    guard let account else {
        // The replaced call's account was removed: the new call could be reported with none.
        // 480 Temporarily Unavailable, as for an INVITE that raced its account's removal.
        code.pointee = 480
        return
    }
    let request = ReplaceRequest(
        call: replaced, sipCallID: sipCallID, from: from ?? SIPAddress(uri: ""), headers: headers)
    if case .reject(let status) = handler?(request) ?? .accept {
        // pjsua answers with its own reason phrase when the text is left as "OK".
        code.pointee = Int32(max(400, min(699, status)))
        return
    }
    bridge.calls.withLock {
        $0.pendingReplacements[replaced.generation] = PendingReplacement(
            account: account, sipCallID: sipCallID, from: request.from, headers: headers)
    }
}

/// pjsua took the new call in `newSlot` in place of the call in `oldSlot` and is about to
/// answer it and end the old one: reports the new call like any incoming call (with
/// `replaces`), then the replacement, before the old call's end.
func onCallReplaced(_ oldSlot: pjsua_call_id, _ newSlot: pjsua_call_id) {
    guard let bridge = EngineBridge.active() else { return }
    let old = Handles.call(oldSlot)
    // pjsua copied the old call's user data (its generation) into the new call: the new
    // call gets a generation of its own before anything reads it.
    let generation = nextGeneration()
    pjsua_call_set_user_data(newSlot, UnsafeMutableRawPointer(bitPattern: UInt(generation)))
    let call = Call(slot: newSlot, generation: generation)
    let pending = bridge.calls.withLock { calls -> PendingReplacement? in
        guard let pending = calls.pendingReplacements.removeValue(forKey: old.generation) else { return nil }
        if pending.sipCallID.utf8.count >= Native.callInfoCallIDCapacity {
            calls.longCallIDs[call.generation] = pending.sipCallID
        }
        calls.callAccounts[call.generation] = pending.account
        return pending
    }
    guard let pending else { return }
    guard let info = Native.readCallInfo(newSlot, call: call) else { return }
    bridge.hub.emit(
        .incomingCall(
            IncomingCall(
                account: pending.account, call: call, sipCallID: info.sipCallID, from: pending.from,
                offeredVideo: info.remoteVideoCount > 0, headers: pending.headers, replaces: old)))
    bridge.hub.emit(
        .callState(
            CallStateChange(
                call: call, state: .incoming, sipCallID: info.sipCallID,
                statusCode: info.statusCode, reason: info.reason)))
    bridge.hub.emit(.callReplaced(CallReplacement(call: old, replacement: call)))
}
