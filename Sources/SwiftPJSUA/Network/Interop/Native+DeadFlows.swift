import CPJSUAShim

extension Native {
    // MARK: Dead flows (RFC 5626 §4.4-4.5)

    /// After a REGISTER that got no response, shuts down the TCP or TLS connection it went
    /// out on, so that pjsua's retry opens a new connection instead of timing out again on
    /// one a NAT or firewall silently forgot.
    ///
    /// pjsip reuses a connection for every request to the same address until the connection
    /// reports an error, and a forgotten one never does: without this the account would
    /// fail with 408 at every retry, for good. A failure that came with a response (a 408
    /// or 503 the registrar sent) proves the flow works and leaves it alone; so does UDP.
    /// Runs inside pjsua's registration callback (`on_reg_state2`), where the regc and the
    /// transport it holds are alive. Wraps `pjsip_regc_get_info` and
    /// `pjsip_transport_shutdown`.
    /// - Parameters:
    ///   - regInfo: the callback's registration info.
    ///   - statusCode: the failure's SIP status as reported to the app (408 for a timeout,
    ///     503 for a transport error).
    /// - Returns: whether a connection was shut down.
    @discardableResult
    static func replaceFlowAfterUnansweredRegister(
        _ regInfo: UnsafeMutablePointer<pjsua_reg_info>, statusCode: Int
    ) -> Bool {
        guard statusCode == 408 || statusCode == 503, let param = regInfo.pointee.cbparam,
            param.pointee.rdata == nil, let regc = regInfo.pointee.regc,
            let transport = cpj_regc_last_transport(regc)
        else { return false }
        return cpj_shutdown_failed_flow(transport, "REGISTER got no response") != 0
    }
}

extension Native {
    /// After a request of a call got no response at all on a TCP or TLS connection (its
    /// client transaction timed out: a re-INVITE, UPDATE, BYE, INFO…), shuts that
    /// connection down so that the next request to that address opens a new one. A request
    /// whose timeout ended the call is also handled by
    /// ``replaceFlowAfterUnansweredRequest(changingCallStateWith:)``.
    ///
    /// pjsip itself ends the call on such a timeout (a re-INVITE or UPDATE that timed out is
    /// followed by a BYE, sent before this runs, on the old connection) but keeps the
    /// connection: every later call to the same proxy or peer would time out on it too.
    /// Runs in pjsua's `on_call_tsx_state`, where the transaction and its transport are
    /// alive. Wraps `pjsip_transport_shutdown`.
    /// - Returns: whether a connection was shut down.
    @discardableResult
    static func replaceFlowAfterUnansweredRequest(
        _ transaction: UnsafeMutablePointer<pjsip_transaction>?, _ event: UnsafeMutablePointer<pjsip_event>?
    ) -> Bool {
        guard let transport = cpj_tsx_unanswered_transport(transaction, event) else { return false }
        return cpj_shutdown_failed_flow(transport, "a request of a call got no response") != 0
    }

    /// The same for the request whose timeout changed the call's state, named in the event
    /// of pjsua's `on_call_state`: an initial INVITE that got no response ends the call, and
    /// so, up to pjproject 2.14, does a re-INVITE or UPDATE (from 2.15 on the call ends
    /// when the BYE sent after it completes).
    ///
    /// From 2.14 on pjsua does not report such a transaction to `on_call_tsx_state`: its
    /// transaction callback runs after the call was disconnected and returns early (2.14
    /// removed the report pjsua's state callback made first, up to 2.13). Where the
    /// transaction was reported (up to 2.13, or from 2.15 on a BYE that timed out after the
    /// re-INVITE was reported) its connection is already shut down and this does nothing.
    /// Runs inside the transaction's state callback, which holds its transport.
    /// - Returns: whether a connection was shut down.
    @discardableResult
    static func replaceFlowAfterUnansweredRequest(
        changingCallStateWith event: UnsafeMutablePointer<pjsip_event>?
    ) -> Bool {
        guard let event, event.pointee.type == PJSIP_EVENT_TSX_STATE else { return false }
        return replaceFlowAfterUnansweredRequest(event.pointee.body.tsx_state.tsx, event)
    }
}
