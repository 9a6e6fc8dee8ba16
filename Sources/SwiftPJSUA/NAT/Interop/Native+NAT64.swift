import CPJSUAShim

extension Native {
    // MARK: NAT64

    /// Throws ``PJSUAError/Code/addressFamilyNotSupported`` in a pjproject built without
    /// IPv6: pjsua_acc_add and pjsua_acc_modify assert that `nat64_opt` is disabled there.
    static func ensureNAT64Available() throws(PJSUAError) {
        guard hasIPv6 else { throw ipv6Unavailable("pjsua_acc_add", "nat64 is enabled") }
    }

    /// Sets the account's `nat64_opt`.
    static func applyNAT64(_ mode: NAT64Mode, to config: inout pjsua_acc_config) {
        config.nat64_opt = mode.isEnabled ? PJSUA_NAT64_ENABLED : PJSUA_NAT64_DISABLED
    }
}
