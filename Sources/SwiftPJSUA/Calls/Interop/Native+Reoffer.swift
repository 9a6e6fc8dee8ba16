import CPJSUAShim
import Foundation

/// A hold or resume re-INVITE the engine sent and awaits the answer to.
struct PendingReoffer: Sendable {
    var purpose: ReinvitePurpose
    var attempts: Int
}

extension Native {
    /// Sends `purpose`'s re-INVITE on `slot` and remembers it (``CallsState/pendingReoffers``),
    /// so that its final response is followed up (a 491 retried, a refusal reported). Engine
    /// thread.
    static func sendReoffer(
        _ call: Call, slot: pjsua_call_id, purpose: ReinvitePurpose, attempts: Int = 1, bridge: EngineBridge
    ) throws(PJSUAError) {
        // Before the send: the answer can arrive on a worker thread before it returns.
        let pending = PendingReoffer(purpose: purpose, attempts: attempts)
        bridge.calls.withLock { $0.pendingReoffers[call.generation] = pending }
        do {
            switch purpose {
            case .hold: try hold(slot)
            case .resume: try resume(slot)
            case .networkChange: try refreshAfterNetworkChange(slot)
            }
        } catch {
            _ = bridge.calls.withLock { $0.pendingReoffers.removeValue(forKey: call.generation) }
            throw error
        }
    }

    /// The wait before re-sending an offer refused with 491 (RFC 3261 §14.1): a random
    /// multiple of 10 ms in 2.1–4 s when we chose the Call-ID (we placed the call), else 0–2 s.
    static func glareDelay(weChoseCallID: Bool) -> Duration {
        .milliseconds(10 * (weChoseCallID ? Int.random(in: 210...400) : Int.random(in: 0...200)))
    }

    /// Follows up the final response `code` of a re-INVITE of `call` (from
    /// `on_call_tsx_state`): nothing for a 2xx or a re-INVITE the app did not ask for;
    /// a 491 is retried after ``glareDelay(weChoseCallID:)`` up to
    /// ``PJSUA/reinviteGlareAttempts`` tries; any other refusal is reported.
    static func reofferAnswered(_ call: Call, code: Int, bridge: EngineBridge) {
        let pending = bridge.calls.withLock { $0.pendingReoffers.removeValue(forKey: call.generation) }
        guard let pending else { return }
        guard code >= 300 else {
            // Its media update (`on_call_media_state`) came before this transaction's end.
            if pending.purpose == .networkChange {
                bridge.hub.emit(.reconnection(CallReconnection(call: call, phase: .reconnected)))
            }
            return
        }
        // A network change's refresh is also retried when its transaction failed (408, 503):
        // a second change can shut the connection it went out on down.
        let retried = code == 491 || (pending.purpose == .networkChange && (code == 408 || code == 503))
        guard retried, pending.attempts < PJSUA.reinviteGlareAttempts else {
            bridge.hub.emit(
                .reinviteFailed(
                    ReinviteFailure(
                        call: call, purpose: pending.purpose, statusCode: code, attempts: pending.attempts)))
            gaveUpReconnecting(call, purpose: pending.purpose, statusCode: code, bridge: bridge)
            return
        }
        _ = bridge.executor.post {
            guard EngineBridge.active() === bridge, let slot = Handles.liveSlot(call),
                let info = readCallInfo(slot, call: call)
            else { return }
            let delay = glareDelay(weChoseCallID: info.info.role == .caller)
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delay / .milliseconds(1)))) {
                _ = bridge.executor.post { retryReoffer(call, pending, bridge: bridge) }
            }
        }
    }

    /// The re-INVITE pjsua sends after an IP change: new media transports, Contact and Via.
    static func refreshAfterNetworkChange(_ slot: pjsua_call_id) throws(PJSUAError) {
        var setting = pjsua_call_setting()
        pjsua_call_setting_default(&setting)
        cpj_call_setting_audio_only(&setting)
        setting.flag = cpj_ip_change_reinvite_flags()
        try PJ.check(pjsua_call_reinvite2(slot, &setting, nil), "pjsua_call_reinvite2")
    }

    /// Follows up the re-INVITE a network change sent for `call` (`sent`: pjsua could send
    /// it): its final response is then handled as a re-offer (a 491 retried, a refusal
    /// reported as ``PJSUAEvent/reinviteFailed(_:)``). One pjsua could not send (an INVITE
    /// of the call still open, often the previous change's) is sent again once the call can
    /// take it, up to ``PJSUA/reinviteGlareAttempts`` tries.
    static func networkRefreshSent(_ call: Call, sent: Bool, bridge: EngineBridge) {
        let pending = PendingReoffer(purpose: .networkChange, attempts: 1)
        if sent {
            bridge.calls.withLock { $0.pendingReoffers[call.generation] = pending }
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(500)) {
            _ = bridge.executor.post { retryReoffer(call, pending, bridge: bridge) }
        }
    }

    /// Sends a 491-refused offer again, if the call is still confirmed; reports the glare as
    /// the outcome when the call cannot take it (pjsua refuses, an INVITE still open).
    private static func retryReoffer(_ call: Call, _ pending: PendingReoffer, bridge: EngineBridge) {
        guard EngineBridge.active() === bridge, let slot = Handles.liveSlot(call),
            readCallState(slot, call: call)?.state == .confirmed
        else { return }
        do {
            try sendReoffer(call, slot: slot, purpose: pending.purpose, attempts: pending.attempts + 1, bridge: bridge)
        } catch {
            // An INVITE still open (its answer pending): a network change's refresh waits
            // for it, a few times, before giving up.
            if pending.purpose == .networkChange, pending.attempts + 1 < PJSUA.reinviteGlareAttempts {
                let next = PendingReoffer(purpose: pending.purpose, attempts: pending.attempts + 1)
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(500)) {
                    _ = bridge.executor.post { retryReoffer(call, next, bridge: bridge) }
                }
                return
            }
            bridge.hub.emit(
                .reinviteFailed(
                    ReinviteFailure(
                        call: call, purpose: pending.purpose, statusCode: 491, attempts: pending.attempts)))
            gaveUpReconnecting(call, purpose: pending.purpose, statusCode: 491, bridge: bridge)
        }
    }

    /// Ends the reconnection episode of a call whose network-change refresh the engine gave
    /// up on (the hub drops it when none is running); the call stays up.
    private static func gaveUpReconnecting(
        _ call: Call, purpose: ReinvitePurpose, statusCode: Int, bridge: EngineBridge
    ) {
        guard purpose == .networkChange else { return }
        bridge.hub.emit(.reconnection(CallReconnection(call: call, phase: .failed(statusCode: statusCode))))
    }
}

extension Native {
    // MARK: Hold and resume

    /// Re-INVITE offering `sendonly`, or `inactive` when the far end already holds us.
    static func hold(_ slot: pjsua_call_id) throws(PJSUAError) {
        try PJ.check(pjsua_call_set_hold2(slot, 0, nil), "pjsua_call_set_hold2")
    }

    /// Re-INVITE offering `sendrecv` again.
    static func resume(_ slot: pjsua_call_id) throws(PJSUAError) {
        try PJ.check(pjsua_call_reinvite(slot, UInt32(PJSUA_CALL_UNHOLD.rawValue), nil), "pjsua_call_reinvite")
    }
}

extension Native {
    // MARK: Re-INVITE and UPDATE for the app

    /// The request ``sendRequestedOffer(_:slot:method:includingSDP:headers:bridge:)`` sends.
    enum RequestedOffer { case reinvite, update }

    /// Sends the app's re-INVITE or UPDATE on `slot`, counted in
    /// ``CallsState/requestedOffers`` (before the send: the answer can arrive on a worker
    /// thread first) so that its refusal is not taken for a failed session refresh.
    static func sendRequestedOffer(
        _ call: Call, slot: pjsua_call_id, method: RequestedOffer, includingSDP: Bool, headers: [SIPHeader],
        bridge: EngineBridge
    ) throws(PJSUAError) {
        let flags = includingSDP ? 0 : UInt32(PJSUA_CALL_NO_SDP_OFFER.rawValue)
        bridge.calls.withLock { $0.requestedOffers[call.generation, default: 0] += 1 }
        let status = withMessageData(headers) { data in
            switch method {
            case .reinvite: pjsua_call_reinvite(slot, flags, data)
            case .update: pjsua_call_update(slot, flags, data)
            }
        }
        do {
            try PJ.check(status, method == .reinvite ? "pjsua_call_reinvite" : "pjsua_call_update")
        } catch {
            _ = bridge.calls.withLock { $0.settleRequestedOffer(of: call) }
            throw error
        }
    }
}
