import Foundation
import SwiftPJSUA

/// The account options shared by `register`, `call` and `listen`:
/// `--registrar URI --id URI --username U --password-env VAR [--realm R] [--proxy URI|none]
/// [--transport udp|tcp|tls|udp6|tcp6|tls6] [--ca-file PEM] [--expires S] [--retry S] [--media-timeout S|off]
/// [--transport-loss end|reinvite] [--srtp MODE[,KEYING...][,tls|,sips]]
/// [--who-may-call servers|contact-user|anyone]`.
struct AccountOptions {
    static let names: Set<String> = [
        "registrar", "id", "username", "password-env", "realm", "proxy", "transport", "ca-file", "expires", "retry",
        "media-timeout", "transport-loss", "srtp", "who-may-call", "watchers",
    ]

    /// How long a confirmed call may receive no RTP before the tool ends it, unless
    /// `--media-timeout` says otherwise: a call to a vanished peer should not run forever.
    static let defaultMediaTimeout: Duration = .seconds(30)

    var registrar: String?
    var identity: String?
    var username: String?
    var password: String?
    var realm: String
    var proxy: String?
    var transport: TransportType
    var caFile: String?
    var expires: Duration?
    var retry: Duration?
    /// `nil`: `--media-timeout off`.
    var mediaTimeout: Duration?
    var transportLoss: TransportLossPolicy
    var nat: NATOptions
    var srtp: SRTPConfiguration
    /// `nil`: the engine's default for a registered account (servers only).
    var whoMayCall: WhoMayCall?
    /// `--watchers URI[,URI...]`: who may subscribe to the account's presence.
    var watchers: [String]

    /// Whether an account with a registrar was asked for (otherwise a local account is used).
    var registers: Bool { registrar != nil }

    init(_ options: Options) throws(UsageError) {
        registrar = options.string("registrar")
        watchers = (options.string("watchers") ?? "").split(separator: ",").map(String.init)
        nat = try NATOptions(options)
        identity = options.string("id")
        username = options.string("username")
        realm = options.string("realm") ?? "*"
        caFile = options.string("ca-file")
        expires = try options.seconds("expires")
        retry = try options.seconds("retry")
        switch options.string("media-timeout") {
        case nil: mediaTimeout = Self.defaultMediaTimeout
        case "off", "0": mediaTimeout = nil
        case let text?:
            let range = PJSUA.mediaInactivityTimeoutRange
            guard let value = Double(text), value >= 1, value <= 3600 else {
                let bounds = "\(range.lowerBound)...\(range.upperBound)"
                throw UsageError(message: "--media-timeout must be off or \(bounds) in seconds, not \(text)")
            }
            mediaTimeout = .milliseconds(Int64(value * 1000))
        }
        switch options.string("transport-loss") ?? "reinvite" {
        case "end": transportLoss = .endCall
        case "reinvite": transportLoss = .reinvite
        case let other: throw UsageError(message: "--transport-loss must be end or reinvite, not \(other)")
        }
        srtp = try Self.parseSRTP(options.string("srtp"))
        switch options.string("who-may-call") {
        case nil: whoMayCall = nil
        case "servers": whoMayCall = .serversOnly
        case "contact-user": whoMayCall = WhoMayCall(onlyFromServers: false, requiresContactUser: true)
        case "anyone": whoMayCall = .anyone
        case let other?:
            throw UsageError(message: "--who-may-call must be servers, contact-user or anyone, not \(other)")
        }
        switch options.string("transport") ?? "udp" {
        case "udp": transport = .udp
        case "tcp": transport = .tcp
        case "tls": transport = .tls
        case "udp6": transport = .udp6
        case "tcp6": transport = .tcp6
        case "tls6": transport = .tls6
        case let other:
            throw UsageError(message: "--transport must be udp, tcp, tls, udp6, tcp6 or tls6, not \(other)")
        }
        if let variable = options.string("password-env") {
            guard let value = ProcessInfo.processInfo.environment[variable] else {
                throw UsageError(message: "--password-env: environment variable \(variable) is not set")
            }
            password = value
        }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw UsageError(message: "--ca-file: cannot read \(caFile)")
        }
        if registrar != nil || identity != nil || username != nil || password != nil {
            guard registrar != nil, identity != nil else {
                throw UsageError(message: "an account needs both --registrar and --id")
            }
            guard (username == nil) == (password == nil) else {
                throw UsageError(message: "--username and --password-env go together")
            }
        }
        // Requests follow the registrar unless told otherwise: it is usually the proxy too.
        switch options.string("proxy") {
        case "none": proxy = nil
        case let uri?: proxy = uri
        case nil: proxy = registrar.map { SIPAddress.addingLooseRouting(to: $0) }
        }
    }

    /// The engine's transport for these options: its IPv6 kind when `bind` is an IPv6
    /// address (`--bind 2001:db8::2`, or `--transport udp6`).
    func transportConfiguration(bind: String?, port: UInt16, publicAddress: String? = nil) -> TransportConfiguration {
        TransportConfiguration(
            type: bind?.contains(":") == true ? transport.overIPv6 : transport, bindAddress: bind, port: port,
            tls: TLSConfiguration(caFile: caFile), publicAddress: publicAddress)
    }

    /// The account to add, when one with a registrar was asked for.
    func accountConfiguration(transport: Transport?) -> AccountConfiguration? {
        guard let registrar, let identity else { return nil }
        var configuration = AccountConfiguration(identity: identity, registrar: registrar, transport: transport)
        if let username, let password {
            configuration.credentials = [.password(password, username: username, realm: realm)]
        }
        if let proxy { configuration.outboundProxies = [proxy] }
        if let expires { configuration.registrationExpiry = max(.seconds(1), expires) }
        if let retry { configuration.retryInterval = retry }
        configuration.mediaInactivityTimeout = mediaTimeout
        configuration.transportLossPolicy = transportLoss
        configuration.natSignaling = nat.signaling
        configuration.nat64 = nat.nat64
        configuration.srtp = srtp
        configuration.whoMayCall = whoMayCall
        configuration.watchers = WatcherPolicy(allowedWatchers: watchers)
        return configuration
    }
}

extension SIPAddress {
    /// `uri` with the `lr` parameter (RFC 3261 loose routing), for use as an outbound proxy.
    static func addingLooseRouting(to uri: String) -> String {
        uri.lowercased().contains(";lr") ? uri : uri + ";lr"
    }
}

extension AccountOptions {
    /// `--srtp MODE[,KEYING...][,tls|,sips]`: `disabled`, `optional` or `mandatory`, then
    /// the keying methods in order (`sdes`, `dtls`; default `sdes`), then optionally the
    /// signalling SRTP requires (`tls`: a TLS hop, `sips`: SIPS end to end). No option: disabled.
    static func parseSRTP(_ text: String?) throws(UsageError) -> SRTPConfiguration {
        guard let text else { return .disabled }
        let words = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let first = words.first, let mode = SRTPConfiguration.Mode(rawValue: first) else {
            throw UsageError(message: "--srtp must start with disabled, optional or mandatory, not \(text)")
        }
        var configuration = SRTPConfiguration(mode: mode, keying: [])
        for word in words.dropFirst() {
            switch word {
            case "tls": configuration.secureSignaling = .tls
            case "sips": configuration.secureSignaling = .sipsEndToEnd
            default:
                guard let keying = SRTPConfiguration.Keying(rawValue: word), !configuration.keying.contains(keying)
                else {
                    throw UsageError(message: "--srtp: \(word) is not sdes, dtls, tls or sips (each once)")
                }
                configuration.keying.append(keying)
            }
        }
        if configuration.keying.isEmpty { configuration.keying = [.sdes] }
        if let missing = configuration.keying.first(where: { !SRTPConfiguration.availableKeying.contains($0) }) {
            throw UsageError(message: "--srtp: this pjproject was built without \(missing.rawValue) keying")
        }
        return configuration
    }
}

extension TransportType {
    /// The same protocol over IPv6.
    var overIPv6: TransportType {
        switch self {
        case .udp, .udp6: .udp6
        case .tcp, .tcp6: .tcp6
        case .tls, .tls6: .tls6
        }
    }
}
