/// A value the engine checks before pjsua sees it: pjlib asserts (aborting the process in a
/// debug pjproject) on many values out of range, and pjsip would report others only much
/// later, as a bare status of some request.
///
/// Each value checks its own fields in `validate()`, declared beside its type, and calls
/// `validate()` of the values it holds, so one call walks a whole configuration:
/// ``PJSUA/start(_:)`` validates its ``Configuration`` and ``PJSUA/addAccount(_:)`` and
/// ``PJSUA/modifyAccount(_:_:)`` their ``AccountConfiguration``, each once, before anything
/// reaches pjsua. Arguments that are values of their own (an ``AudioFrameFormat``, a
/// sequence of ``Tone``s) are checked the same way by the method that takes them.
protocol Validatable {
    /// Throws the first problem found: ``PJSUAUsageError/invalidConfiguration(_:)`` for a
    /// configuration value, ``PJSUAUsageError/invalidArgument(_:)`` for an argument, with a
    /// text that names the value and the range it must be in.
    func validate() throws(PJSUAUsageError)
}

/// `host[:port]` text as pjsua's STUN and TURN settings and public addresses take it: a host
/// (a name, an IPv4 address, or an IPv6 address, bracketed when a port follows) of 1 to 253
/// characters with no space or control character (pjlib asserts on an empty host and on
/// one of 254 characters or more), and a port 1-65535 when given.
enum HostPort {
    static func isValid(_ text: String, allowsPort: Bool = true) -> Bool {
        guard
            !text.unicodeScalars.contains(where: {
                $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F
            })
        else { return false }
        var host = Substring(text)
        var port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return false }
                port = rest.dropFirst()
            }
        } else if host.filter({ $0 == ":" }).count == 1, let colon = host.firstIndex(of: ":") {
            port = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty, host.utf8.count <= 253 else { return false }
        if let port {
            guard allowsPort, let number = Int(port), (1...65535).contains(number) else { return false }
        }
        return true
    }

    /// Throws for an address (a transport's or RTP's bind or public address) that is not a
    /// host without a port, as pjlib takes it; `nil` and the empty text are no address.
    static func validateAddress(_ address: String?) throws(PJSUAUsageError) {
        guard let address, !address.isEmpty, !isValid(address, allowsPort: false) else { return }
        throw .invalidConfiguration(
            "address \"\(address)\" must be a host of at most 253 characters, without spaces, control characters "
                + "or a port")
    }
}
