import Foundation
import SwiftPJSUA

/// `--stun HOST[:PORT][,HOST[:PORT]…]`, `--ice`, `--turn URI` and `--turn-password-env VAR`,
/// for every command.
enum MediaNATOptions {
    static let valued: Set<String> = ["stun", "turn", "turn-password-env"]
    static let flags: Set<String> = ["ice"]

    /// Whether any of the options was given: only then does the tool print media transport
    /// lines (see ``report(_:engine:printer:)``).
    static func isUsed(_ options: Options) -> Bool {
        options.flags.contains("ice") || options.string("stun") != nil || options.string("turn") != nil
    }

    /// Puts the options into the engine's configuration.
    static func apply(_ options: Options, to config: inout Configuration) throws(UsageError) {
        if let stun = options.string("stun") {
            let servers = stun.split(separator: ",").map(String.init)
            guard !servers.isEmpty, servers.count <= PJSUA.maxSTUNServers else {
                throw UsageError(message: "--stun needs 1 to \(PJSUA.maxSTUNServers) servers, comma-separated")
            }
            config.stun.servers = servers
        }
        config.media.ice.isEnabled = options.flags.contains("ice")
        if let uri = options.string("turn") {
            guard config.media.ice.isEnabled else {
                throw UsageError(message: "--turn needs --ice (TURN relays ICE's media)")
            }
            config.media.turn = try turn(uri, passwordVariable: options.string("turn-password-env"))
        } else if options.string("turn-password-env") != nil {
            throw UsageError(message: "--turn-password-env goes with --turn")
        }
    }

    /// Parses `turn:[USER[:PASSWORD]@]HOST[:PORT][?transport=udp|tcp]` or
    /// `turns:[USER[:PASSWORD]@]HOST[:PORT]` (TLS). A password in the environment variable
    /// named by `passwordVariable` takes the place of one in the URI.
    static func turn(_ uri: String, passwordVariable: String?) throws(UsageError) -> TURNConfiguration {
        let bad = UsageError(
            message: "--turn must be turn:[USER[:PASSWORD]@]HOST[:PORT][?transport=udp|tcp] or turns:…, not \(uri)")
        var rest: Substring
        var transport: TURNTransport
        if uri.hasPrefix("turns:") {
            rest = uri.dropFirst(6)
            transport = .tls
        } else if uri.hasPrefix("turn:") {
            rest = uri.dropFirst(5)
            transport = .udp
        } else {
            throw bad
        }
        if let query = rest.firstIndex(of: "?") {
            switch rest[rest.index(after: query)...].lowercased() {
            case "transport=udp" where transport == .udp: transport = .udp
            case "transport=tcp" where transport == .udp: transport = .tcp
            case "transport=tcp" where transport == .tls: break
            default: throw bad
            }
            rest = rest[..<query]
        }
        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let user = rest[..<at]
            if let colon = user.firstIndex(of: ":") {
                username = String(user[..<colon])
                password = String(user[user.index(after: colon)...])
            } else {
                username = String(user)
            }
            rest = rest[rest.index(after: at)...]
        }
        guard !rest.isEmpty, !rest.contains(where: \.isWhitespace), username?.isEmpty != true else { throw bad }
        if let passwordVariable {
            guard let value = ProcessInfo.processInfo.environment[passwordVariable] else {
                throw UsageError(message: "--turn-password-env: environment variable \(passwordVariable) is not set")
            }
            password = value
        }
        var configuration = TURNConfiguration(server: String(rest), transport: transport)
        if let username {
            guard let password else {
                throw UsageError(message: "--turn: a user needs a password (in the URI or --turn-password-env)")
            }
            configuration.credential = .password(password, username: username)
        }
        return configuration
    }

    /// Prints a call's media path once it is known: with ICE, the nominated pair once the
    /// checks have completed (`ice completed: rtp relayed A -> relayed B`) or their failure;
    /// without, where RTP comes from (`rtp from ADDRESS`). Gives up after 15 s or when the
    /// call ends.
    static func report(_ call: Call, engine: PJSUA, printer: EventPrinter) {
        Task {
            let deadline = ContinuousClock.now + .seconds(15)
            while ContinuousClock.now < deadline {
                guard let transport = try? await engine.mediaTransport(of: call) else { return }
                if let ice = transport.ice, ice.isActive {
                    if ice.state == .failed {
                        printer.line("ice failed on \(call)")
                        return
                    }
                    if ice.state == .completed, let rtp = ice.selectedPairs.first {
                        let role = ice.isControlling ? "controlling" : "controlled"
                        printer.line(
                            "ice completed on \(call) (\(role)): rtp \(rtp.local.type.rawValue) \(rtp.local.address)"
                                + " -> \(rtp.remote.type.rawValue) \(rtp.remote.address)")
                        return
                    }
                } else if let source = transport.rtpSource {
                    printer.line("rtp on \(call) from \(source), local \(transport.localAddress)")
                    return
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }
}
