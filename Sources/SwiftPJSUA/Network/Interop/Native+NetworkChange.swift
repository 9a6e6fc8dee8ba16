import CPJSUAShim

extension Native {
    // MARK: Network changes

    /// Starts `pjsua_handle_ip_change`; its steps arrive through `on_ip_change_progress`.
    static func handleIPChange(_ options: NetworkChangeOptions) throws(PJSUAError) {
        var param = pjsua_ip_change_param()
        pjsua_ip_change_param_default(&param)
        param.restart_listener = options.restartsListeners ? 1 : 0
        param.restart_lis_delay = UInt32(options.listenerRestartDelay.milliseconds)
        cpj_ip_change_param_set_shutdown_transport(&param, options.shutsDownReliableTransports ? 1 : 0)
        try PJ.check(pjsua_handle_ip_change(&param), "pjsua_handle_ip_change")
    }

    /// Fills `pjsua_acc_config.ip_change_cfg` from the account's policy.
    static func applyNetworkChangePolicy(_ config: inout pjsua_acc_config, _ policy: NetworkChangePolicy) {
        config.ip_change_cfg.shutdown_tp = policy.shutsDownRegistrationTransport ? 1 : 0
        config.ip_change_cfg.hangup_calls = policy.confirmedCalls == .end ? 1 : 0
        switch policy.confirmedCalls {
        case .reinvite, .update: config.ip_change_cfg.reinvite_flags = cpj_ip_change_reinvite_flags()
        case .keep, .end: config.ip_change_cfg.reinvite_flags = 0
        }
        cpj_ip_change_cfg_set_use_update(&config.ip_change_cfg, policy.confirmedCalls == .update ? 1 : 0)
    }
}

/// `on_ip_change_progress`: one step of `pjsua_handle_ip_change`, on the thread that made it
/// (the engine thread, or a worker for the steps that follow a response).
func onIPChangeProgress(
    _ op: pjsua_ip_change_op, _ status: pj_status_t, _ info: UnsafePointer<pjsua_ip_change_op_info>?
) {
    guard let bridge = EngineBridge.active() else { return }
    let error = status == pj_status_t(PJ_SUCCESS.rawValue) ? nil : PJ.error(status, "pjsua_handle_ip_change")
    var progress: NetworkChangeProgress
    switch Int(cpj_ip_change_step(op)) {
    case CPJ_IP_CHANGE_SHUTDOWN_TP:
        progress = NetworkChangeProgress(step: .reliableTransportsShutDown)
    case CPJ_IP_CHANGE_RESTART_LIS:
        progress = NetworkChangeProgress(step: .listenerRestarted)
        if let info { progress.transport = Transport(id: info.pointee.lis_restart.transport_id) }
    case CPJ_IP_CHANGE_ACC_SHUTDOWN_TP:
        progress = NetworkChangeProgress(step: .accountTransportShutDown)
        if let info { progress.account = Handles.account(pjsua_acc_id(info.pointee.acc_shutdown_tp.acc_id)) }
    case CPJ_IP_CHANGE_ACC_UPDATE_CONTACT:
        progress = NetworkChangeProgress(step: .contactUpdated)
        if let info {
            let update = info.pointee.acc_update_contact
            progress.account = Handles.account(update.acc_id)
            progress.isRegistration = update.is_register != 0
            if update.is_register != 0 { progress.statusCode = Int(update.code) }
            if update.is_register != 0,
                status != pj_status_t(PJ_SUCCESS.rawValue) || !(200..<300).contains(update.code),
                let account = progress.account
            {
                bridge.accountRecords.scheduleAfterFailedNetworkChange(account)
            }
        }
    case CPJ_IP_CHANGE_ACC_HANGUP_CALLS:
        progress = NetworkChangeProgress(step: .callEnded)
        if let info {
            progress.account = Handles.account(info.pointee.acc_hangup_calls.acc_id)
            progress.call = Handles.liveCall(info.pointee.acc_hangup_calls.call_id)
        }
    case CPJ_IP_CHANGE_ACC_REINVITE_CALLS:
        progress = NetworkChangeProgress(step: .targetRefreshSent)
        if let info {
            progress.account = Handles.account(info.pointee.acc_reinvite_calls.acc_id)
            progress.call = Handles.liveCall(info.pointee.acc_reinvite_calls.call_id)
        }
        // Its answer is followed up like a hold's (491 retried, a refusal reported); one that
        // could not be sent is sent again. Not for UPDATE, whose answer is not followed.
        if let call = progress.call, !usesUpdate(progress, bridge: bridge) {
            Native.networkRefreshSent(call, sent: error == nil, bridge: bridge)
        }
    case CPJ_IP_CHANGE_COMPLETED:
        progress = NetworkChangeProgress(step: .completed)
    default:
        return
    }
    progress.error = error
    if progress.step == .completed { bridge.network.withLock { $0.inProgressUntil = nil } }
    bridge.hub.emit(.networkChange(progress))
    // The call's refresh is under way (sent, or to be sent again): it is reconnecting until
    // the re-INVITE's outcome (Native.reofferAnswered). Not for UPDATE, whose answer is not
    // followed.
    if progress.step == .targetRefreshSent, let call = progress.call, !usesUpdate(progress, bridge: bridge) {
        bridge.hub.emit(.reconnection(CallReconnection(call: call, phase: .reconnecting(.networkChange))))
    }
}

/// Whether the account of a network change's step refreshes calls with UPDATE.
private func usesUpdate(_ progress: NetworkChangeProgress, bridge: EngineBridge) -> Bool {
    progress.account.flatMap { bridge.accountRecords.configuration(of: $0) }?.networkChange.confirmedCalls == .update
}
