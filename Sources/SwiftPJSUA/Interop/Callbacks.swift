import CPJSIP

// MARK: - C callbacks
//
// Free functions, installed in `pjsua_config.cb`. They run on pjsua's worker threads or on
// the engine thread (when a pjsua call made there triggers them), never block and never
// await: they copy what they need into Sendable values and hand them to the hub.

func onCallState(_ slot: pjsua_call_id, _ event: UnsafeMutablePointer<pjsip_event>?) {
    guard let bridge = EngineBridge.active() else { return }
    let call = Handles.call(slot)
    guard let info = Native.readCallInfo(slot, call: call) else { return }
    bridge.hub.emit(.callState(
        call: call, state: info.state, sipCallID: info.sipCallID,
        lastStatus: info.lastStatusCode, reason: info.lastReason))
    if info.state == .disconnected {
        // Players and recorders are destroyed on the engine thread, outside pjsua's locks.
        let owned = bridge.media.withLock { $0.removeAll(for: call.generation) }
        if !owned.players.isEmpty || !owned.recorders.isEmpty {
            bridge.executor.post {
                // pjsua may have been destroyed (and restarted, reusing ids) meanwhile.
                guard EngineBridge.active() === bridge else { return }
                Native.destroyMediaPorts(players: owned.players, recorders: owned.recorders)
            }
        }
    }
}

func onIncomingCall(_ accountSlot: pjsua_acc_id, _ slot: pjsua_call_id, _ rdata: UnsafeMutablePointer<pjsip_rx_data>?) {
    guard let bridge = EngineBridge.active() else { return }
    let call = Handles.call(slot)
    guard let info = Native.readCallInfo(slot, call: call) else { return }
    var from = info.remote
    if let rdata, let uri = cpj_rdata_from_uri(rdata) {
        // The From display-name as pjsip parsed it: unquoted, escapes intact.
        let display = PJ.string(cpj_uri_display(uri))
        if !display.isEmpty { from.displayName = SIPAddress(parsing: "\"\(display)\" <x>").displayName }
    }
    bridge.hub.emit(.incomingCall(
        account: Handles.account(accountSlot), call: call, sipCallID: info.sipCallID,
        from: from, offeredVideo: info.remoteVideoCount > 0))
    // pjsua reports state changes only; the call's first state is reported here so that
    // a call's state events always start with INCOMING (or CALLING).
    bridge.hub.emit(.callState(
        call: call, state: .incoming, sipCallID: info.sipCallID,
        lastStatus: info.lastStatusCode, reason: info.lastReason))
}

func onCallMediaState(_ slot: pjsua_call_id) {
    guard let bridge = EngineBridge.active() else { return }
    let call = Handles.call(slot)
    guard let info = Native.readCallInfo(slot, call: call) else { return }
    Native.applyMediaLinks(bridge: bridge, call: call, info: info)
    bridge.hub.emit(.callMediaState(call: call, media: info.media))
}

func onRegistrationState(_ accountSlot: pjsua_acc_id, _ regInfo: UnsafeMutablePointer<pjsua_reg_info>?) {
    guard let bridge = EngineBridge.active() else { return }
    var code = 0
    var reason = ""
    var expiration = 0
    var renew = true
    if let param = regInfo?.pointee.cbparam {
        code = Int(param.pointee.code)
        reason = PJ.string(param.pointee.reason)
        expiration = Int(param.pointee.expiration)
        if param.pointee.status != cpj_success(), code == 0 || code / 100 == 2 {
            // No response: pjsip reports a transport, TLS or timeout status instead.
            code = Int(cpj_sip_code_from_status(param.pointee.status))
            if code == 0 || code / 100 == 2 { code = 408 }
            reason = PJ.describe(param.pointee.status)
        }
    }
    if let regInfo { renew = regInfo.pointee.renew != 0 }
    let outcome: RegistrationOutcome =
        if code / 100 != 2 {
            .failed(statusCode: code, reason: reason)
        } else if renew && expiration > 0 {
            .registered(expiration: .seconds(expiration))
        } else {
            .unregistered
        }
    let account = Handles.account(accountSlot)
    if renew, case .failed(let code, _) = outcome, [401, 403, 407].contains(code) {
        bridge.accountRecords.scheduleAfterAuthenticationFailure(account)
    }
    bridge.hub.emit(.registrationState(
        account: account, outcome: outcome, statusCode: code, reason: reason,
        expiration: outcome.isRegistered ? .seconds(expiration) : .zero))
}

func onLog(_ level: Int32, _ data: UnsafePointer<CChar>?, _ length: Int32) {
    guard let data, length > 0, let handler = EngineBridge.active()?.logHandler else { return }
    var text = String(decoding: UnsafeRawBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    while text.last == "\n" || text.last == "\r" { text.removeLast() }
    handler.log(level: Int(level), message: text)
}
