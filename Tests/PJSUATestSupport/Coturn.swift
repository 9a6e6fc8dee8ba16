import Foundation

/// A coturn STUN and TURN server (`turnserver`) for tests: one static long-term-credential
/// user in one realm, listening and relaying on one address, usually a public-segment host
/// of a ``Topology`` (started in its namespace through `launcher`). TLS (on port 5349) only
/// when given a certificate; no DTLS, no CLI, no database outside the test's folder. RFC 3489
/// binding requests are answered too: pjsua's STUN for RTP without ICE
/// (`pjstun_get_mapped_addr2`) sends them.
///
/// coturn logs each TURN session's traffic when the session closes (the client's
/// deallocation at the end of a call, or the engine's shutdown): ``relayedSessions`` reads
/// those lines, so a test can show that media really went through the relay.
public final class Coturn: Sendable {
    /// The realm coturn challenges with.
    public static let realm = "swiftpjsua.test"
    /// The one user and its password.
    public static let username = "ice"
    public static let password = "turn-Secret-6620"

    /// The address coturn listens and relays on.
    public let address: String
    /// The STUN/TURN port (UDP and TCP).
    public let port: UInt16
    /// The TURN-over-TLS port, when started with a certificate.
    public let tlsPort: UInt16?
    private let process: PeerProcess

    /// `address:port`, as a STUN server setting.
    public var server: String { "\(address):\(port)" }

    private init(address: String, port: UInt16, tlsPort: UInt16?, process: PeerProcess) {
        self.address = address
        self.port = port
        self.tlsPort = tlsPort
        self.process = process
    }

    /// Starts coturn and waits until its UDP listener is open.
    /// - Parameters:
    ///   - address: the address to listen and relay on (must exist where coturn runs).
    ///   - port: the STUN/TURN port, 3478 by default.
    ///   - relayPorts: the UDP ports for relayed addresses.
    ///   - launcher: a command prefix, e.g. a host's `ip netns exec NAMESPACE`.
    ///   - tls: a certificate and key for TURN over TLS on port 5349.
    public static func start(
        folder: TemporaryFolder, address: String, port: UInt16 = 3478, relayPorts: ClosedRange<UInt16> = 49152...49251,
        launcher: [String] = [], tls: Kamailio.TLSFiles? = nil, name: String = "coturn"
    ) async throws -> Coturn {
        let config = folder.file("\(name).conf")
        let tlsPort: UInt16? = tls == nil ? nil : 5349
        let tlsLines =
            tls.map { files in
                """
                tls-listening-port=5349
                cert=\(files.certificate.path)
                pkey=\(files.privateKey.path)
                no-tlsv1
                no-tlsv1_1
                """
            } ?? "no-tls"
        try """
        listening-ip=\(address)
        relay-ip=\(address)
        listening-port=\(port)
        min-port=\(relayPorts.lowerBound)
        max-port=\(relayPorts.upperBound)
        realm=\(realm)
        lt-cred-mech
        user=\(username):\(password)
        fingerprint
        no-cli
        \(tlsLines)
        no-dtls
        no-rfc5780
        no-multicast-peers
        log-file=stdout
        simple-log
        verbose
        pidfile=\(folder.file("\(name).pid").path)
        userdb=\(folder.file("\(name).db").path)
        """.write(to: config, atomically: true, encoding: .utf8)
        let process = try PeerProcess(
            name, executable: "/usr/bin/turnserver", arguments: ["-c", config.path], folder: folder, launcher: launcher)
        let coturn = Coturn(address: address, port: port, tlsPort: tlsPort, process: process)
        do {
            try await process.waitForOutput(
                containing: "UDP listener opened on: \(address):\(port)", timeout: .seconds(10))
        } catch {
            process.stop()
            throw error
        }
        return coturn
    }

    /// One closed TURN session's relayed traffic (coturn's `peer usage` line): what the
    /// relay received from peers and sent to them on the client's behalf.
    public struct RelayedSession: Sendable, Hashable {
        /// coturn's session id.
        public var session: String
        /// The authenticated username.
        public var username: String
        /// Packets and bytes the relayed address received from peers.
        public var receivedPackets: Int
        public var receivedBytes: Int
        /// Packets and bytes the relayed address sent to peers.
        public var sentPackets: Int
        public var sentBytes: Int
        /// The client's address as coturn saw it (the NAT's public side), from the
        /// session's `closed` line; empty when that line is missing.
        public var client: String
    }

    /// Every closed session's relayed traffic so far.
    public var relayedSessions: [RelayedSession] {
        let lines = output.split(whereSeparator: \.isNewline)
        var clients: [String: String] = [:]
        for line in lines where line.contains(": closed") {
            guard let session = Self.field(line, after: "session ", until: ":"),
                let remote = Self.field(line, after: "remote ", until: ",")
            else { continue }
            clients[session] = remote
        }
        return lines.compactMap { line in
            guard line.contains("peer usage:"), let session = Self.field(line, after: "session ", until: ":") else {
                return nil
            }
            func number(_ key: String) -> Int {
                Self.field(line, after: "\(key)=", until: ",").flatMap { Int($0) } ?? 0
            }
            return RelayedSession(
                session: session, username: Self.field(line, after: "username=<", until: ">") ?? "",
                receivedPackets: number("rp"), receivedBytes: number("rb"), sentPackets: number("sp"),
                sentBytes: number("sb"), client: clients[session] ?? "")
        }
    }

    /// Waits until `count` sessions have logged their relayed traffic.
    public func waitForRelayedSessions(_ count: Int, timeout: Duration = .seconds(10)) async throws -> [RelayedSession]
    {
        var sessions: [RelayedSession] = []
        try await waitUntil(
            "coturn to close \(count) relayed session(s)", timeout: timeout, every: .milliseconds(50), seen: { output }
        ) {
            sessions = relayedSessions
            return sessions.count >= count
        }
        return sessions
    }

    /// How many TURN allocations coturn granted (its `new, realm=…` lines).
    public var allocationCount: Int {
        output.split(whereSeparator: \.isNewline).filter { $0.contains(": new, realm=") }.count
    }

    /// The text between `start` and the next `end` (or the line's end) in `line`.
    private static func field(_ line: Substring, after start: String, until end: Character) -> String? {
        guard let range = line.range(of: start) else { return nil }
        let rest = line[range.upperBound...]
        return String(rest.prefix { $0 != end })
    }

    /// Everything coturn logged, for failure messages.
    public var output: String { process.output }

    /// Ends coturn.
    public func stop() { process.stop() }

    deinit { process.stop() }
}
