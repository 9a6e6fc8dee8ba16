import Foundation
import SwiftPJSUA

/// The account options shared by `register`, `call` and `listen`:
/// `--registrar URI --id URI --username U (--password-env VAR | --ha1-env VAR --realm R
/// [--ha1-algorithm md5|sha-256]) [--realm R] [--proxy URI|none]
/// [--transport udp|tcp|tls|udp6|tcp6|tls6] [--ca-file PEM] [--expires S] [--retry S] [--media-timeout S|off]
/// [--transport-loss end|reinvite] [--srtp MODE[,KEYING...][,tls|,sips]]
/// [--who-may-call servers|contact-user|anyone]`, and for the commands that place or take
/// calls (``callPolicyNames``) `--100rel off|supported|required`
/// `--session-timers off|optional|required|always [--session-expires S] [--min-se S]`.
///
/// `--registrar` needs `--id`; credentials (`--username` with `--password-env` or
/// `--ha1-env`) need `--id` too, with or without a registrar: without one, the account does
/// not register and answers the 401/407 challenges of its calls and requests.
struct AccountOptions {
    static let names: Set<String> = [
        "registrar", "id", "username", "password-env", "ha1-env", "ha1-algorithm", "realm", "proxy", "transport",
        "ca-file", "expires", "retry", "media-timeout", "transport-loss", "srtp", "who-may-call", "watchers",
    ]

    /// The options of the account's call policies, taken by `call`, `listen` and `phone` only.
    static let callPolicyNames: Set<String> = ["100rel", "session-timers", "session-expires", "min-se"]

    /// How long a confirmed call may receive no RTP before the tool ends it, unless
    /// `--media-timeout` says otherwise: a call to a vanished peer should not run forever.
    static let defaultMediaTimeout: Duration = .seconds(30)

    var registrar: String?
    var identity: String?
    var username: String?
    var password: String?
    /// `--ha1-env VAR`: the precomputed HA1 (hex) from that environment variable, in place of
    /// a password; never from the command line, which other users can read (`ps`).
    var ha1: String?
    var ha1Algorithm: DigestAlgorithm
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
    /// `--100rel off|supported|required`; the engine's default (supported) when not given.
    var reliableProvisionals: ReliableProvisionalPolicy
    /// `--session-timers MODE`, `--session-expires S` and `--min-se S`; the engine's defaults
    /// (optional, 1800 s, 90 s) for what is not given. The engine checks the RFC 4028 limits
    /// (`Min-SE` at least 90 s, `Session-Expires` at least the `Min-SE`) when it adds the account.
    var sessionTimers: SessionTimers

    /// Whether an account with a registrar was asked for.
    var registers: Bool { registrar != nil }

    /// Whether the account needs the engine's full account configuration: an identity was
    /// given, or a call policy other than the engine's defaults, which a plain local account
    /// (``PJSUA/addLocalAccount(on:isDefault:mediaInactivityTimeout:transportLossPolicy:)``)
    /// does not take.
    var needsConfiguredAccount: Bool {
        identity != nil || reliableProvisionals != .supported || sessionTimers != .default
    }

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
        ha1Algorithm = .md5
        switch options.string("ha1-algorithm")?.lowercased() {
        case nil, "md5": break
        case "sha-256", "sha256": ha1Algorithm = .sha256
        case let other?: throw UsageError(message: "--ha1-algorithm must be md5 or sha-256, not \(other)")
        }
        if let variable = options.string("ha1-env") {
            ha1 = try Self.ha1(fromVariable: variable, algorithm: ha1Algorithm, realm: realm)
        } else if options.string("ha1-algorithm") != nil {
            throw UsageError(message: "--ha1-algorithm goes with --ha1-env")
        }
        if password != nil, ha1 != nil {
            throw UsageError(message: "--password-env and --ha1-env are two forms of one secret: give one")
        }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw UsageError(message: "--ca-file: cannot read \(caFile)")
        }
        if registrar != nil, identity == nil {
            throw UsageError(message: "--registrar needs --id, the address-of-record to register")
        }
        guard (username == nil) == (password == nil && ha1 == nil) else {
            throw UsageError(message: "--username goes with --password-env or --ha1-env")
        }
        if username != nil, identity == nil {
            throw UsageError(
                message: "credentials need --id, the identity they answer challenges for "
                    + "(without --registrar the account does not register)")
        }
        (reliableProvisionals, sessionTimers) = try Self.callPolicies(options)
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

    /// The account to add, unless a plain local account will do (``needsConfiguredAccount``).
    /// Without `--id`, its identity is the transport's address, as a local account's is.
    /// - Parameter transport: the engine's transport the account uses.
    func accountConfiguration(transport: TransportInfo?) -> AccountConfiguration? {
        guard needsConfiguredAccount, let identity = identity ?? transport.map(Self.localIdentity) else { return nil }
        var configuration = AccountConfiguration(
            identity: identity, registrar: registrar, transport: transport?.transport,
            // The only account of the tool takes every request, as a local account does.
            isDefault: registrar == nil)
        if let username, let password {
            configuration.credentials = [.password(password, username: username, realm: realm)]
        } else if let username, let ha1 {
            configuration.credentials = [.digest(ha1: ha1, username: username, realm: realm, algorithm: ha1Algorithm)]
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
        configuration.reliableProvisionals = reliableProvisionals
        configuration.sessionTimers = sessionTimers
        return configuration
    }

    /// `<sip:HOST:PORT>` of `transport` (with its `transport` parameter over TCP or TLS): the
    /// identity of an account on the tool's own address.
    static func localIdentity(_ transport: TransportInfo) -> String {
        let host = transport.host.contains(":") ? "[\(transport.host)]" : transport.host
        let parameter = transport.type.isReliable ? ";transport=\(transport.type.uriParameter)" : ""
        return "<sip:\(host):\(transport.port)\(parameter)>"
    }

    /// `--100rel` and `--session-timers`, `--session-expires`, `--min-se`. Seconds must be whole
    /// numbers (1 to 86400); the engine checks RFC 4028's limits between them.
    static func callPolicies(_ options: Options) throws(UsageError) -> (ReliableProvisionalPolicy, SessionTimers) {
        var reliable = ReliableProvisionalPolicy.supported
        if let text = options.string("100rel") {
            let policy = ReliableProvisionalPolicy(rawValue: text.lowercased())
            guard [ReliableProvisionalPolicy.off, .supported, .required].contains(policy) else {
                throw UsageError(message: "--100rel must be off, supported or required, not \(text)")
            }
            reliable = policy
        }
        var timers = SessionTimers.default
        if let text = options.string("session-timers") {
            let mode = SessionTimers.Mode(rawValue: text.lowercased())
            guard [SessionTimers.Mode.off, .optional, .required, .always].contains(mode) else {
                throw UsageError(message: "--session-timers must be off, optional, required or always, not \(text)")
            }
            timers.mode = mode
        }
        for name in ["session-expires", "min-se"] {
            guard let text = options.string(name) else { continue }
            guard let seconds = Int(text), (1...86_400).contains(seconds) else {
                throw UsageError(message: "--\(name) must be a whole number of seconds (1-86400), not \(text)")
            }
            guard timers.mode != .off else {
                throw UsageError(message: "--\(name) needs session timers: not with --session-timers off")
            }
            if name == "min-se" {
                timers.minimumInterval = .seconds(seconds)
            } else {
                timers.interval = .seconds(seconds)
            }
        }
        return (reliable, timers)
    }
}

extension AccountOptions {
    /// The HA1 in environment variable `variable`: as many hex digits as `algorithm` gives
    /// (surrounding white space dropped), for a `realm` of its own. The errors name the
    /// variable, never its value.
    static func ha1(fromVariable variable: String, algorithm: DigestAlgorithm, realm: String) throws(UsageError)
        -> String
    {
        guard let raw = ProcessInfo.processInfo.environment[variable] else {
            throw UsageError(message: "--ha1-env: environment variable \(variable) is not set")
        }
        let value = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        let allHex = value.allSatisfy(\.isHexDigit)
        guard value.count == algorithm.hexDigits, allHex else {
            let found = "\(value.count) characters" + (allHex ? "" : ", not all hex digits")
            throw UsageError(
                message: "--ha1-env: environment variable \(variable) must hold the \(algorithm) HA1 as "
                    + "\(algorithm.hexDigits) hex digits (it holds \(found))")
        }
        guard realm != "*", !realm.isEmpty else {
            throw UsageError(message: "--ha1-env needs --realm: an HA1 is computed for one realm")
        }
        return value
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
