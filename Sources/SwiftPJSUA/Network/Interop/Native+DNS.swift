import CPJSUAShim

extension Native {
    // MARK: DNS (RFC 3263)

    /// Puts the nameservers into `pjsua_config.nameserver`, so that `pjsua_init` creates
    /// pjsip's asynchronous DNS resolver; ``setUpDNS(_:)`` completes it after `pjsua_init`.
    static func applyNameservers(_ dns: DNSConfiguration, to config: inout pjsua_config, scope: StringScope) {
        for (index, nameserver) in dns.nameservers.prefix(Int(cpj_max_nameservers())).enumerated() {
            cpj_config_set_nameserver(&config, UInt32(index), scope.pj(nameserver.host))
        }
    }

    /// After `pjsua_init`: the nameservers again with their ports (pjsua sets port 53),
    /// the query timing, and the resolver that tries unresponsive SRV targets last (see
    /// `cpj_dns_setup`). Nothing without nameservers. Wraps `pj_dns_resolver_set_ns`,
    /// `pj_dns_resolver_set_settings` and `pjsip_endpt_set_ext_resolver`.
    static func setUpDNS(_ dns: DNSConfiguration) throws(PJSUAError) {
        guard !dns.nameservers.isEmpty else { return }
        let scope = StringScope()
        let servers = dns.nameservers.map { scope.pj($0.host) }
        let ports = dns.nameservers.map(\.port)
        let status = servers.withUnsafeBufferPointer { servers in
            ports.withUnsafeBufferPointer { ports in
                cpj_dns_setup(
                    servers.baseAddress, ports.baseAddress, UInt32(servers.count),
                    UInt32(clamping: dns.queryRetransmitInterval.milliseconds), UInt32(dns.queryRetransmissions),
                    UInt32(clamping: dns.unresponsiveNameserverHoldDown.components.seconds),
                    UInt32(clamping: dns.unresponsiveTargetHoldDown.milliseconds))
            }
        }
        withExtendedLifetime(scope) {}
        try PJ.check(
            status, "pj_dns_resolver_set_ns", subject: dns.nameservers.map(\.description).joined(separator: ", "))
    }

    /// Before `pjsua_destroy`: hands the DNS resolver back to pjsip, which destroys it.
    static func tearDownDNS() {
        cpj_dns_teardown()
    }

    /// After a REGISTER of `slot` that got no response at all (a timeout, or a send failure
    /// to every target), marks the target it went to unresponsive; returns whether its
    /// domain has another target that a new REGISTER would try. Runs inside pjsua's
    /// registration callback (`on_reg_state2`).
    static func markUnansweredRegisterTarget(
        _ slot: pjsua_acc_id, _ regInfo: UnsafeMutablePointer<pjsua_reg_info>, statusCode: Int
    ) -> Bool {
        guard statusCode == 408 || statusCode == 503, regInfo.pointee.renew != 0,
            let param = regInfo.pointee.cbparam, param.pointee.rdata == nil
        else { return false }
        return cpj_dns_mark_register_unanswered(slot) != 0
    }
}

extension AccountRecords {
    /// Registers the account again at once, on the engine thread, after its REGISTER went
    /// unanswered and its domain has another SRV target: pjsua alone would wait its retry
    /// interval and then resolve to the same dead target. Runs inside pjsua's registration
    /// callback, which holds pjsua's lock until pjsua has scheduled its own retry; the
    /// REGISTER sent here (`pjsua_acc_set_registration`) cancels that retry.
    func registerAgainAtNextTarget(_ account: Account) {
        guard let bridge = EngineBridge.active() else { return }
        let generation = account.generation
        _ = bridge.executor.post {
            guard EngineBridge.active() === bridge,
                let account = bridge.accountRecords.accountToRetry(generation: generation),
                let slot = Handles.liveSlot(account)
            else { return }
            _ = pjsua_acc_set_registration(slot, 1)
        }
    }
}
