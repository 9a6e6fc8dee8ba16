import CPJSUAShim

extension Native {
    /// Ends a call whose ACK did not carry the answer to the offer in our 200 (RFC 3261
    /// §13.2.1): BYE with a Reason header (RFC 3326, cause 488) and a terminal event with
    /// ``PJSUA/missingAnswerReason``. Called from the call-state callback; the hang-up runs
    /// on the engine thread.
    static func endWithoutAnswer(_ call: Call, bridge: EngineBridge) {
        bridge.deadPeers.setEndReason(PJSUA.missingAnswerReason, of: call)
        _ = bridge.executor.post {
            guard EngineBridge.active() === bridge, let slot = Handles.liveSlot(call) else { return }
            // pjsua reports a local hang-up's DISCONNECTED at once, with the reason set above.
            _ = cpj_call_hangup_no_answer(slot)
            _ = bridge.hub.synthesizeEnd(of: call, reason: PJSUA.missingAnswerReason)
        }
    }
}
