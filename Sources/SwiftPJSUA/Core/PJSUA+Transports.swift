extension PJSUA {
    // MARK: Transports

    /// The SIP transports created at start, with their bound addresses and ports.
    /// Wraps `pjsua_transport_get_info`.
    /// - Throws: ``PJSUAUsageError/notStarted`` or ``PJSUAUsageError/shutDown``.
    public func transports() throws -> [TransportInfo] {
        try runtime().transports.map { try Native.transportInfo($0) }
    }
}
