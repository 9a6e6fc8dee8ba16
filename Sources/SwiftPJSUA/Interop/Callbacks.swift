import CPJSUAShim

// MARK: - C callbacks
//
// Free functions, installed in `pjsua_config.cb`. They run on pjsua's worker threads or on
// the engine thread (when a pjsua call made there triggers them), never block and never
// await: they copy what they need into Sendable values and hand them to the hub.

func onCallState(_ slot: pjsua_call_id, _ event: UnsafeMutablePointer<pjsip_event>?) {
    guard let bridge = EngineBridge.active() else { return }
    let call = Handles.call(slot)
    guard let info = Native.readCallState(slot, call: call) else { return }
    // A call the engine ended (no RTP, connection lost) says why, not what the BYE got.
    let reason = info.state == .disconnected ? bridge.deadPeers.endReason(of: call) ?? info.reason : info.reason
    bridge.deadPeers.observe(call, state: info.state, connection: Native.connection(of: event))
    bridge.hub.emit(.callState(CallStateChange(
        call: call, state: info.state, sipCallID: info.sipCallID,
        lastStatus: info.lastStatus, reason: reason)))
    Native.updateRingback(bridge: bridge, call: call, slot: slot, state: info)
    // Our 200 made the offer and the ACK brought no answer: there is no session to keep.
    if info.state == .confirmed && cpj_call_confirmed_without_answer(slot) != 0 {
        Native.endWithoutAnswer(call, bridge: bridge)
    }
    if info.state == .disconnected {
        Handles.forget(call)
        _ = bridge.longCallIDs.withLock { $0.removeValue(forKey: call.generation) }
        _ = bridge.callAccounts.withLock { $0.removeValue(forKey: call.generation) }
        _ = bridge.incomingCallNetworkEpochs.withLock { $0.removeValue(forKey: call.generation) }
        // Players and recorders are destroyed on the engine thread, outside pjsua's locks.
        let owned = bridge.media.withLock { $0.removeAll(for: call.generation) }
        if !owned.players.isEmpty || !owned.recorders.isEmpty || !owned.frames.isEmpty {
            bridge.executor.post {
                // pjsua may have been destroyed (and restarted, reusing ids) meanwhile;
                // shutdown took the frame ports off then.
                guard EngineBridge.active() === bridge else { return }
                Native.destroyMediaPorts(players: owned.players, recorders: owned.recorders)
                Native.removeBridgePorts(bridge: bridge, owned.frames)
            }
        }
    }
}

func onIncomingCall(_ accountSlot: pjsua_acc_id, _ slot: pjsua_call_id, _ rdata: UnsafeMutablePointer<pjsip_rx_data>?) {
    guard let bridge = EngineBridge.active() else { return }
    let call = Handles.call(slot)
    // (readCallInfo below records it as the call's own account.)
    guard let account = Handles.account(accountSlot) else {
        // The INVITE raced the removal of its account: nobody can take the call. 480
        // Temporarily Unavailable (RFC 3261 §21.4.18), and the app never hears of it.
        bridge.hub.suppress(call)
        pjsua_call_answer(slot, 480, nil, nil)
        return
    }
    if let rdata {
        let sipCallID = PJ.string(cpj_rdata_call_id(rdata))
        // pjsua's call info holds 127 bytes of it; keep a longer one for this call's events.
        if sipCallID.utf8.count >= Native.callInfoCallIDCapacity {
            bridge.longCallIDs.withLock { $0[call.generation] = sipCallID }
        }
    }
    guard let info = Native.readCallInfo(slot, call: call) else { return }
    let epoch = bridge.networkChangeCount.withLock { $0 }
    bridge.incomingCallNetworkEpochs.withLock { $0[call.generation] = epoch }
    var from = info.remote
    if let rdata, let uri = cpj_rdata_from_uri(rdata) {
        // The From display-name as pjsip parsed it: unquoted, escapes intact.
        let display = PJ.string(cpj_uri_display(uri))
        if !display.isEmpty { from.displayName = SIPAddress(parsing: "\"\(display)\" <x>").displayName }
    }
    bridge.hub.emit(.incomingCall(IncomingCall(
        account: account, call: call, sipCallID: info.sipCallID,
        from: from, offeredVideo: info.remoteVideoCount > 0, headers: rdata.map(Native.headers(of:)) ?? [])))
    // pjsua reports state changes only; the call's first state is reported here so that
    // a call's state events always start with INCOMING (or CALLING).
    bridge.hub.emit(.callState(CallStateChange(
        call: call, state: .incoming, sipCallID: info.sipCallID,
        lastStatus: info.lastStatusCode, reason: info.lastReason)))
}

func onCallMediaState(_ slot: pjsua_call_id) {
    guard let bridge = EngineBridge.active(), let call = Handles.liveCall(slot) else { return }
    Native.recordSRTPKeying(slot, call: call)
    guard let info = Native.readCallInfo(slot, call: call) else { return }
    Native.applyMediaLinks(bridge: bridge, call: call, info: info)
    Native.updateRingback(bridge: bridge, call: call, info: info)
    bridge.hub.emit(.callMediaState(CallMediaChange(call: call, media: info.media)))
}

/// Reports a digit once, when it ends: pjmedia reports an RFC 4733 event's start, updates and
/// end (and drops repeated end packets); a SIP INFO digit arrives as one ended event.
func onDTMFEvent(_ slot: pjsua_call_id, _ event: UnsafePointer<pjsua_dtmf_event>?) {
    guard let bridge = EngineBridge.active(), let event else { return }
    guard event.pointee.flags & cpj_dtmf_flag_is_end() != 0 else { return }
    // SIP INFO carries whatever character the peer put after `Signal=`; pjsua passes it on.
    // Report only what the event promises (0-9 * # A-D, uppercase); anything else is no digit.
    guard let scalar = Unicode.Scalar(event.pointee.digit),
          let digit = Character(scalar).uppercased().first, "0123456789*#ABCD".contains(digit) else { return }
    let duration = event.pointee.duration
    guard let call = Handles.liveCall(slot) else { return }
    bridge.hub.emit(.dtmf(DTMFDigit(
        call: call, digit: digit,
        method: event.pointee.method == PJSUA_DTMF_METHOD_SIP_INFO ? .sipInfo : .rfc4733,
        duration: duration == cpj_dtmf_unknown_duration() ? nil : .milliseconds(Int64(duration)))))
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
        bridge.hub.emit(.transferStatus(TransferProgress(
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
    let handler = bridge.transferHandler.withLock { $0 }
    if case .reject(let status) = handler?(request) ?? .accept {
        code.pointee = pjsip_status_code(rawValue: UInt32(max(400, min(699, status))))
    }
    if let setting {
        // The new call is audio only, like every call the engine makes.
        cpj_call_setting_audio_only(setting)
    }
    bridge.hub.emit(.transferRequest(TransferRequestAnswer(call: call, target: request.target, statusCode: Int(code.pointee.rawValue))))
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
    // info here would take its dialog lock while pjsua holds its own).
    let account = bridge.callAccounts.withLock { $0[replaced.generation] }.flatMap { recorded in
        Handles.account(recorded.slot) == recorded ? recorded : nil
    }
    guard let account else {
        // The replaced call's account was removed: the new call could be reported with none.
        // 480 Temporarily Unavailable, as for an INVITE that raced its account's removal.
        code.pointee = 480
        return
    }
    let request = ReplaceRequest(
        call: replaced, sipCallID: sipCallID, from: from ?? SIPAddress(uri: ""), headers: headers)
    let handler = bridge.replaceHandler.withLock { $0 }
    if case .reject(let status) = handler?(request) ?? .accept {
        // pjsua answers with its own reason phrase when the text is left as "OK".
        code.pointee = Int32(max(400, min(699, status)))
        return
    }
    bridge.pendingReplacements.withLock {
        $0[replaced.generation] = PendingReplacement(
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
    guard let pending = bridge.pendingReplacements.withLock({ $0.removeValue(forKey: old.generation) }) else { return }
    if pending.sipCallID.utf8.count >= Native.callInfoCallIDCapacity {
        bridge.longCallIDs.withLock { $0[call.generation] = pending.sipCallID }
    }
    bridge.callAccounts.withLock { $0[call.generation] = pending.account }
    guard let info = Native.readCallInfo(newSlot, call: call) else { return }
    bridge.hub.emit(.incomingCall(IncomingCall(
        account: pending.account, call: call, sipCallID: info.sipCallID, from: pending.from,
        offeredVideo: info.remoteVideoCount > 0, headers: pending.headers, replaces: old)))
    bridge.hub.emit(.callState(CallStateChange(
        call: call, state: .incoming, sipCallID: info.sipCallID,
        lastStatus: info.lastStatusCode, reason: info.lastReason)))
    bridge.hub.emit(.callReplaced(CallReplacement(call: old, replacement: call)))
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
        } else if param.pointee.status == cpj_status_auth_stale_count() {
            reason = RegistrationOutcome.staleNonceLimitReason
        }
    }
    if let regInfo { renew = regInfo.pointee.renew != 0 }
    if !renew, code / 100 != 2, bridge.isDestroying.withLock({ $0 }) {
        reason = RegistrationOutcome.unregistrationCutShortReason
    }
    let outcome: RegistrationOutcome =
        if code / 100 != 2 {
            .failed(statusCode: code, reason: reason)
        } else if renew && expiration > 0 {
            .registered(expiration: .seconds(expiration))
        } else {
            .unregistered
        }
    if let regInfo, case .failed = outcome {
        // Before pjsua's retry (scheduled for later) picks the same dead connection again.
        Native.replaceFlowAfterUnansweredRegister(regInfo, statusCode: code)
    }
    // A dead SRV target is marked even when its account was removed meanwhile: the mark
    // is per address and steers every later request to that domain (RFC 3263 §4.3).
    let failsOver = regInfo.map { Native.markUnansweredRegisterTarget(accountSlot, $0, statusCode: code) } ?? false
    // A registration callback of an account removed meanwhile has nobody to tell.
    guard let account = Handles.account(accountSlot) else { return }
    bridge.accountRecords.record(outcome, of: account)
    if failsOver { bridge.accountRecords.registerAgainAtNextTarget(account) }
    if outcome.isRegistered { bridge.accountRecords.startFlowKeepAlive(account) }
    if renew, case .failed(let code, _) = outcome, [401, 403, 407].contains(code) {
        bridge.accountRecords.scheduleAfterAuthenticationFailure(account)
    }
    bridge.hub.emit(.registrationState(RegistrationChange(
        account: account, outcome: outcome, statusCode: code, reason: reason,
        expiration: outcome.isRegistered ? .seconds(expiration) : .zero)))
}

func onLog(_ level: Int32, _ data: UnsafePointer<CChar>?, _ length: Int32) {
    guard let data, length > 0, let handler = EngineBridge.active()?.logHandler else { return }
    var text = String(decoding: UnsafeRawBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    while text.last == "\n" || text.last == "\r" { text.removeLast() }
    handler.log(level: Int(level), message: text)
}
