import CPJSUAShim

extension Native {
    // MARK: NAT64

    /// Throws ``PJSUAError/Code/addressFamilyNotSupported`` in a pjproject built without
    /// IPv6: pjsua_acc_add and pjsua_acc_modify assert that `nat64_opt` is disabled there.
    static func ensureNAT64Available() throws(PJSUAError) {
        guard hasIPv6 else { throw ipv6Unavailable("pjsua_acc_add", "nat64 is enabled") }
    }

    /// Sets the account's `nat64_opt`. For an account with NAT64 on, discovers the NAT64
    /// prefix first (RFC 7050, a blocking `getaddrinfo` on the engine thread) and hands it
    /// to the shim's SDP module; without one that module refuses IPv4-only offers.
    static func applyNAT64(_ mode: NAT64Mode, to config: inout pjsua_acc_config) {
        config.nat64_opt = mode.isEnabled ? PJSUA_NAT64_ENABLED : PJSUA_NAT64_DISABLED
        guard mode.isEnabled else { return }
        let prefix = discoverNAT64Prefix(name: mode.discoveryName)
        setNAT64Prefix(prefix)
    }

    /// The NAT64 prefix RFC 7050 finds: the AAAA records of `name` (normally
    /// `ipv4only.arpa`) through the system resolver, searched for 192.0.0.170 or .171.
    static func discoverNAT64Prefix(name: String) -> NAT64Prefix? {
        var bytes = [UInt8](repeating: 0, count: 16)
        var length: UInt32 = 0
        let found = name.withCString { cpj_nat64_discover($0, &bytes, &length) }
        return found != 0 ? NAT64Prefix(bytes: bytes, length: Int(length)) : nil
    }

    /// The prefix the shim's module synthesizes with; `nil` makes it refuse.
    static func setNAT64Prefix(_ prefix: NAT64Prefix?) {
        guard let prefix else {
            cpj_nat64_set_prefix(nil, 0)
            return
        }
        cpj_nat64_set_prefix(prefix.bytes, UInt32(prefix.length))
    }

    /// The prefix the shim's module holds now.
    static func currentNAT64Prefix() -> NAT64Prefix? {
        var bytes = [UInt8](repeating: 0, count: 16)
        var length: UInt32 = 0
        return cpj_nat64_prefix(&bytes, &length) != 0 ? NAT64Prefix(bytes: bytes, length: Int(length)) : nil
    }

    /// RFC 6052 §2.2: the IPv6 address of `ipv4` (4 bytes) inside `prefix`.
    static func synthesizeNAT64(_ ipv4: [UInt8], prefix: NAT64Prefix) -> [UInt8]? {
        guard ipv4.count == 4 else { return nil }
        var out = [UInt8](repeating: 0, count: 16)
        return cpj_nat64_synthesize(prefix.bytes, UInt32(prefix.length), ipv4, &out) != 0 ? out : nil
    }

    /// RFC 7050 §3: the prefix of an address synthesized for 192.0.0.170 or .171.
    static func nat64Prefix(ofWellKnownAddress address: [UInt8]) -> NAT64Prefix? {
        guard address.count == 16 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 16)
        var length: UInt32 = 0
        return cpj_nat64_prefix_from_address(address, &bytes, &length) != 0
            ? NAT64Prefix(bytes: bytes, length: Int(length)) : nil
    }

    /// The SDP with its IPv4 media addresses (`c=`, `a=rtcp:`) synthesized into `prefix`
    /// (or, with no prefix and `rejectStreams`, its streams at port 0), and how many IPv4
    /// media addresses it had. The function the shim's module applies to received bodies.
    static func rewriteSDPForNAT64(_ sdp: String, prefix: NAT64Prefix?, rejectStreams: Bool) -> (
        sdp: String, ipv4Addresses: Int
    ) {
        let input = Array(sdp.utf8)
        let bytes = prefix?.bytes ?? []
        let length = UInt32(prefix?.length ?? 0)
        var found: Int32 = 0
        let rejecting: Int32 = rejectStreams ? 1 : 0
        return input.withUnsafeBufferPointer { text in
            text.withMemoryRebound(to: CChar.self) { chars in
                bytes.withUnsafeBufferPointer { prefixBytes in
                    let prefixPointer = prefix == nil ? nil : prefixBytes.baseAddress
                    let size = cpj_nat64_rewrite_sdp(
                        chars.baseAddress, chars.count, prefixPointer, length, rejecting, nil, 0, nil)
                    var out = [CChar](repeating: 0, count: max(Int(size), 1))
                    let written = cpj_nat64_rewrite_sdp(
                        chars.baseAddress, chars.count, prefixPointer, length, rejecting, &out, out.count, &found)
                    guard written >= 0 else { return (sdp, Int(found)) }
                    let utf8 = out.prefix(Int(written)).map { UInt8(bitPattern: $0) }
                    return (String(decoding: utf8, as: UTF8.self), Int(found))
                }
            }
        }
    }

    /// Ends a call whose answer named an IPv4 media address while no NAT64 prefix was
    /// known (the shim rejected its streams so that pjmedia attached nothing): BYE or
    /// CANCEL with `Reason: SIP;cause=488` and a terminal event with
    /// ``PJSUA/nat64PrefixUnknownReason``. Called from the call-state callback.
    static func endIfNAT64Refused(_ call: Call, slot: pjsua_call_id, bridge: EngineBridge) {
        guard cpj_nat64_take_refused(slot) != 0 else { return }
        bridge.deadPeers.setEndReason(PJSUA.nat64PrefixUnknownReason, of: call)
        _ = bridge.executor.post {
            guard EngineBridge.active() === bridge, let slot = Handles.liveSlot(call) else { return }
            _ = cpj_call_hangup_nat64(slot)
            _ = bridge.hub.synthesizeEnd(of: call, reason: PJSUA.nat64PrefixUnknownReason)
        }
    }

    /// Clears a call slot's refusal mark when its call ends.
    static func forgetNAT64(slot: pjsua_call_id) { cpj_nat64_forget(slot) }
}
