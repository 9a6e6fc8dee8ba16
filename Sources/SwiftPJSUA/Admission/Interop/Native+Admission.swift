import CPJSUAShim
import Foundation

extension Native {
    // MARK: Admission (admission.c)

    /// Registers the admission module with the engine's limits; once per `pjsua_init`.
    static func registerAdmission(_ limits: IncomingLimits) throws(PJSUAError) {
        let rate = limits.requestRate
        try PJ.check(
            cpj_register_admission(
                UInt32(clamping: rate?.perSecond ?? 0), UInt32(clamping: rate?.burst ?? 0),
                UInt32(clamping: limits.retryAfter.components.seconds), UInt32(clamping: limits.maxRingingCalls ?? 0)),
            "pjsip_endpt_register_module")
    }

    /// Gives the account's slot its policy and server addresses (IP literals at once), then
    /// resolves the host names on a thread of their own. Runs on the engine thread, before
    /// the account's first REGISTER.
    static func configureAdmission(_ slot: pjsua_acc_id, _ account: AccountConfiguration) {
        let policy = account.effectiveWhoMayCall
        let servers = policy.onlyFromServers ? [account.registrar].compactMap { $0 } + account.outboundProxies : []
        let scope = StringScope()
        let uris = servers.map { scope.pj($0) }
        let generation = uris.withUnsafeBufferPointer { buffer in
            cpj_admission_configure_account(
                slot, policy.onlyFromServers ? 1 : 0, policy.requiresContactUser ? 1 : 0, buffer.baseAddress,
                UInt32(buffer.count))
        }
        withExtendedLifetime(scope) {}
        if policy.onlyFromServers { resolveAdmissionServers(slot, generation: generation) }
    }

    /// Clears the slot's policy (a local account, or a deleted one whose slot pjsua reuses).
    static func forgetAdmission(_ slot: pjsua_acc_id) { cpj_admission_forget_account(slot) }

    /// Looks the account's server hosts up again (`getaddrinfo`, which may block for the
    /// resolver's timeout) on a new thread, off the engine thread and the Swift pool.
    static func resolveAdmissionServers(_ slot: pjsua_acc_id, generation: UInt32) {
        guard generation != 0 else { return }
        Thread.detachNewThread { cpj_admission_resolve_servers(slot, generation) }
    }

    /// After a registration outcome (on pjsua's thread): the response's source becomes one
    /// of the account's servers, and its hosts are looked up again.
    static func noteRegistrationResponse(_ slot: pjsua_acc_id, _ rdata: UnsafeMutablePointer<pjsip_rx_data>?) {
        let generation = cpj_admission_generation(slot)
        guard generation != 0 else { return }
        if let rdata { cpj_admission_learn_server(slot, rdata) }
        resolveAdmissionServers(slot, generation: generation)
    }

    /// The module's counters since the engine started.
    static func admissionCounters() -> AdmissionCounters {
        var counters = cpj_admission_counters()
        cpj_admission_get_counters(&counters)
        return AdmissionCounters(
            notFromServer: Int(clamping: counters.not_from_server), unknownUser: Int(clamping: counters.unknown_user),
            rateLimited: Int(clamping: counters.rate_limited), ringingCapReached: Int(clamping: counters.ringing_cap))
    }
}
