import CPJSUAShim

extension Native {
    // MARK: Transports

    static func transportInfo(_ transport: Transport) throws(PJSUAError) -> TransportInfo {
        var info = pjsua_transport_info()
        try PJ.check(pjsua_transport_get_info(transport.id, &info), "pjsua_transport_get_info")
        return TransportInfo(
            transport: transport, type: TransportType(native: info.type),
            host: PJ.string(info.local_name.host), port: UInt16(truncatingIfNeeded: info.local_name.port))
    }
}

extension TransportType {
    var native: pjsip_transport_type_e {
        switch self {
        case .udp: PJSIP_TRANSPORT_UDP
        case .tcp: PJSIP_TRANSPORT_TCP
        case .udp6: PJSIP_TRANSPORT_UDP6
        case .tcp6: PJSIP_TRANSPORT_TCP6
        case .tls: PJSIP_TRANSPORT_TLS
        case .tls6: PJSIP_TRANSPORT_TLS6
        }
    }

    init(native: pjsip_transport_type_e) {
        switch native {
        case PJSIP_TRANSPORT_TCP: self = .tcp
        case PJSIP_TRANSPORT_UDP6: self = .udp6
        case PJSIP_TRANSPORT_TCP6: self = .tcp6
        case PJSIP_TRANSPORT_TLS: self = .tls
        case PJSIP_TRANSPORT_TLS6: self = .tls6
        default: self = .udp
        }
    }
}
