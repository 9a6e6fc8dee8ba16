import CPJSUAShim

// MARK: - C callbacks
//
// Free functions, installed in `pjsua_config.cb`. They run on pjsua's worker threads or on
// the engine thread (when a pjsua call made there triggers them), never block and never
// await: they copy what they need into Sendable values and hand them to the hub.

func onCallState(_ slot: pjsua_call_id, _ event: UnsafeMutablePointer<pjsip_event>?) {
    // RFC 5626 §4.4: a request that got no response and so ended the call retires its
    // connection too (pjsua does not always report that transaction to on_call_tsx_state).
    Native.replaceFlowAfterUnansweredRequest(changingCallStateWith: event)
    guard let bridge = EngineBridge.active() else { return }
    let call = Handles.call(slot)
    guard let info = Native.readCallState(slot, call: call) else { return }
    // A call the engine ended (no RTP, connection lost) says why, not what the BYE got.
    let reason = info.state == .disconnected ? bridge.deadPeers.endReason(of: call) ?? info.reason : info.reason
    bridge.deadPeers.observe(call, state: info.state, connection: Native.connection(of: event))
    bridge.hub.emit(
        .callState(
            CallStateChange(
                call: call, state: info.state, sipCallID: info.sipCallID,
                statusCode: info.statusCode, reason: reason)))
    Native.updateRingback(bridge: bridge, call: call, slot: slot, state: info)
    // Our 200 made the offer and the ACK brought no answer: there is no session to keep.
    if info.state == .confirmed && cpj_call_confirmed_without_answer(slot) != 0 {
        Native.endWithoutAnswer(call, bridge: bridge)
    }
    // An answer with an IPv4 media address and no NAT64 prefix: its streams were rejected.
    if info.state != .disconnected { Native.endIfNAT64Refused(call, slot: slot, bridge: bridge) }
    if info.state == .disconnected {
        Native.forgetNAT64(slot: slot)
        Handles.forget(call)
        bridge.calls.withLock { $0.forget(call) }
        bridge.network.withLock { $0.forget(call) }
        // Players and recorders are destroyed on the engine thread, outside pjsua's locks.
        let owned = bridge.media.withLock { $0.plan.removeAll(for: call.generation) }
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
            bridge.calls.withLock { $0.longCallIDs[call.generation] = sipCallID }
        }
    }
    guard let info = Native.readCallInfo(slot, call: call) else { return }
    bridge.network.withLock { $0.noteArrival(of: call) }
    var from = info.remote
    if let rdata, let uri = cpj_rdata_from_uri(rdata) {
        // The From display-name as pjsip parsed it: unquoted, escapes intact.
        let display = PJ.string(cpj_uri_display(uri))
        if !display.isEmpty { from.displayName = SIPAddress(parsing: "\"\(display)\" <x>").displayName }
    }
    bridge.hub.emit(
        .incomingCall(
            IncomingCall(
                account: account, call: call, sipCallID: info.sipCallID,
                from: from, offeredVideo: info.remoteVideoCount > 0, headers: rdata.map(Native.headers(of:)) ?? [])))
    // pjsua reports state changes only; the call's first state is reported here so that
    // a call's state events always start with INCOMING (or CALLING).
    bridge.hub.emit(
        .callState(
            CallStateChange(
                call: call, state: .incoming, sipCallID: info.sipCallID,
                statusCode: info.statusCode, reason: info.reason)))
}

func onCallMediaState(_ slot: pjsua_call_id) {
    guard let bridge = EngineBridge.active(), let call = Handles.liveCall(slot) else { return }
    Native.recordSRTPKeying(slot, call: call, bridge: bridge)
    guard let info = Native.readCallInfo(slot, call: call) else { return }
    Native.applyMediaLinks(bridge: bridge, call: call, info: info)
    Native.updateRingback(bridge: bridge, call: call, info: info)
    bridge.hub.emit(.callMediaState(CallMediaChange(call: call, media: info.media)))
}
