import CPJSUAShim

extension Native {
    // MARK: Registration

    /// Accounts with a live registration.
    static func registeredAccounts(records: AccountRecords) -> [Account] {
        accounts().filter { (try? accountInfo($0, lastOutcome: records.lastOutcome(of: $0)).isRegistered) == true }
    }

    /// Sends REGISTER with expires 0 for the account. Wraps `pjsua_acc_set_registration`.
    static func unregister(_ slot: pjsua_acc_id) throws(PJSUAError) {
        try PJ.check(pjsua_acc_set_registration(slot, 0), "pjsua_acc_set_registration")
    }
}

func onRegistrationState(_ accountSlot: pjsua_acc_id, _ regInfo: UnsafeMutablePointer<pjsua_reg_info>?) {
    guard let bridge = EngineBridge.active() else { return }
    var code = 0
    var reason = ""
    var expiration = 0
    var renew = true
    if let param = regInfo?.pointee.cbparam {
        // The server that answered is one the account accepts calls from (WhoMayCall).
        Native.noteRegistrationResponse(accountSlot, param.pointee.rdata)
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
    bridge.hub.emit(
        .registrationState(
            RegistrationChange(
                account: account, outcome: outcome, statusCode: code, reason: reason,
                expiration: outcome.isRegistered ? .seconds(expiration) : .zero)))
}
