import Foundation

/// A Kamailio registrar and proxy on loopback, running `Tests/Peers/kamailio.cfg`: digest
/// authentication against fixed test passwords, an in-memory location table, and proxying
/// of requests between registered users.
public final class Kamailio: Sendable {
    /// The test users and their passwords, as `kamailio.cfg` knows them.
    public static let passwords = [
        "alice": "alice-Secret-7431", "bob": "bob-Secret-2286", "carol": "carol-Secret-5519",
    ]

    /// TLS files for Kamailio's tls module.
    public struct TLSFiles: Sendable {
        public var certificate: URL
        public var privateKey: URL

        public init(certificate: URL, privateKey: URL) {
            self.certificate = certificate
            self.privateKey = privateKey
        }
    }

    /// The UDP and TCP port (the same number) on ``address``.
    public let port: UInt16
    /// The address it listens on: 127.0.0.1, or its host's address in a ``Topology``.
    public let address: String
    /// The TLS port on 127.0.0.1, when started with TLS.
    public let tlsPort: UInt16?
    /// The UDP port on [::1], when started with IPv6.
    public let ipv6Port: UInt16?
    private let folder: TemporaryFolder
    private let process: PeerProcess

    /// The host name it takes as its own and puts in its Record-Route instead of
    /// ``address``, when started with one.
    public let advertisedHost: String?

    /// `sip:ADDRESS:PORT` (e.g. `sip:127.0.0.1:5060`), the registrar's URI over UDP; with
    /// the advertised host name in place of the address when there is one.
    public var uri: String { "sip:\(advertisedHost ?? address):\(port)" }

    /// The address-of-record of a test user at this registrar, e.g. `sip:alice@127.0.0.1:5060`.
    public func aor(_ user: String) -> String { "sip:\(user)@\(advertisedHost ?? address):\(port)" }

    private let host: Topology.Host?

    private init(
        port: UInt16, address: String, advertisedHost: String? = nil, host: Topology.Host?, tlsPort: UInt16?,
        ipv6Port: UInt16?, folder: TemporaryFolder, process: PeerProcess
    ) {
        self.port = port
        self.address = address
        self.advertisedHost = advertisedHost
        self.host = host
        self.tlsPort = tlsPort
        self.ipv6Port = ipv6Port
        self.folder = folder
        self.process = process
    }

    /// Starts Kamailio and waits until it answers an OPTIONS probe.
    /// - Parameters:
    ///   - port: the UDP/TCP port; a free one when `nil` (give the old one to restart).
    ///   - tls: certificate and key for a TLS listener on another free port.
    ///   - ipv6: also listen on UDP `[::1]`.
    ///   - host: run inside this ``Topology`` host's namespace, listening on its address
    ///     (port 5060 unless `port` is given) instead of 127.0.0.1.
    ///   - natHelper: handle clients behind NAT (`-A WITH_NAT`, the `nathelper` module):
    ///     REGISTER from a client whose Contact or Via does not match its source is stored
    ///     with the source as its `received` address, and the Contact of other requests and
    ///     replies from such a client is rewritten to its source.
    ///   - advertisedHost: a host name (resolvable by the clients, not by Kamailio) that
    ///     Kamailio takes as its own in Request-URIs and Route headers and puts in its
    ///     Record-Route (port 5060) instead of its address (`-A DOMAIN_NAME`).
    ///   - replySDPSubstitution: with `natHelper`, a `subst_body` expression
    ///     (`/regex/replacement/flags`) Kamailio applies to the SDP of every reply it relays.
    ///   - digestAlgorithm: the algorithm its challenges name and its checks use (the auth
    ///     module's `algorithm`, `MD5` or `SHA-256`); MD5 when `nil`.
    public static func start(
        folder: TemporaryFolder, port: UInt16? = nil, tls: TLSFiles? = nil, ipv6: Bool = false,
        name: String = "kamailio", in host: Topology.Host? = nil, natHelper: Bool = false,
        advertisedHost: String? = nil, replySDPSubstitution: String? = nil, digestAlgorithm: String? = nil
    ) async throws -> Kamailio {
        let port = port ?? (host == nil ? FreePort.tcpAndUDP() : 5060)
        let address = host?.address ?? "127.0.0.1"
        let runDirectory = folder.file("\(name)-run")
        try FileManager.default.createDirectory(at: runDirectory, withIntermediateDirectories: true)
        var arguments = [
            "-DD", "-E", "-f", Repository.root.appendingPathComponent("Tests/Peers/kamailio.cfg").path,
            "-w", runDirectory.path, "-Y", runDirectory.path, "-P", runDirectory.appendingPathComponent("pid").path,
            "-l", "udp:\(address):\(port)", "-l", "tcp:\(address):\(port)",
        ]
        if let advertisedHost { arguments += ["-A", "DOMAIN_NAME=\"\(advertisedHost)\""] }
        if let replySDPSubstitution {
            // The configuration's string syntax: a backslash is written twice.
            let escaped = replySDPSubstitution.replacingOccurrences(of: "\\", with: "\\\\")
            arguments += ["-A", "SDP_SUBST=\"\(escaped)\""]
        }
        if natHelper { arguments += ["-A", "WITH_NAT"] }
        if let digestAlgorithm { arguments += ["-A", "DIGEST_ALGORITHM=\"\(digestAlgorithm)\""] }
        // A unix socket for kamcmd (``contacts(of:)``); the path is reachable from any
        // network namespace.
        let control = runDirectory.appendingPathComponent("ctl").path
        arguments += ["-A", "CTL_SOCKET=\"unix:\(control)\""]
        var tlsPort: UInt16?
        if let tls {
            let chosen = FreePort.tcpAndUDP()
            tlsPort = chosen
            let config = folder.file("\(name)-tls.cfg")
            try """
            [server:default]
            method = TLSv1.2+
            verify_certificate = no
            require_certificate = no
            certificate = \(tls.certificate.path)
            private_key = \(tls.privateKey.path)

            [client:default]
            verify_certificate = no
            require_certificate = no
            """.write(to: config, atomically: true, encoding: .utf8)
            arguments += ["-A", "WITH_TLS", "-A", "TLS_CONFIG=\"\(config.path)\"", "-l", "tls:\(address):\(chosen)"]
        }
        var ipv6Port: UInt16?
        if ipv6 {
            let chosen = FreePort.udp6()
            ipv6Port = chosen
            arguments += ["-l", "udp:[::1]:\(chosen)"]
        }
        let process = try PeerProcess(
            name, executable: "/usr/sbin/kamailio", arguments: arguments, folder: folder,
            launcher: host?.launcher ?? [])
        let kamailio = Kamailio(
            port: port, address: address, advertisedHost: advertisedHost, host: host, tlsPort: tlsPort,
            ipv6Port: ipv6Port, folder: folder, process: process)
        try await kamailio.waitUntilAnswering()
        return kamailio
    }

    /// The Contact URIs the location table holds for `user` now, with where Kamailio sends
    /// requests for each (its `received` address when it stored one), from `kamcmd ul.dump`.
    public func contacts(of user: String) -> [(contact: String, received: String?)] {
        let control = folder.file("\(process.name)-run").appendingPathComponent("ctl").path
        guard let dump = commandOutput("/usr/sbin/kamcmd", ["-s", "unix:\(control)", "ul.dump"])?.output else {
            return []
        }
        // ul.dump prints each record's AoR, then each of its contacts as
        // "Address: <uri>" followed by its attributes ("Received: <uri>" among them).
        var result: [(contact: String, received: String?)] = []
        var inUser = false
        for line in dump.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("AoR:") {
                let aor = line.dropFirst(4).trimmingCharacters(in: .whitespaces)
                inUser = aor == user || aor.hasPrefix("\(user)@")
            } else if inUser, line.hasPrefix("Address:") {
                result.append((String(line.dropFirst(8).trimmingCharacters(in: .whitespaces)), nil))
            } else if inUser, line.hasPrefix("Received:"), !result.isEmpty {
                let value = line.dropFirst(9).trimmingCharacters(in: .whitespaces)
                if !value.isEmpty, value != "[not set]" { result[result.count - 1].received = String(value) }
            }
        }
        return result
    }

    /// Sends OPTIONS probes every 50 ms until one gets a 200 (at most 15 s).
    private func waitUntilAnswering() async throws {
        if let host {
            // Inside a namespace: the probe runs there too, polling by itself.
            let probe = Repository.root.appendingPathComponent("Tests/Peers/netprobe.py").path
            if host.exec(["/usr/bin/python3", probe, "sip-options", address, String(port), "15"]).status == 0 {
                return
            }
            process.stop()
            throw TimedOut(what: "Kamailio to answer OPTIONS on \(address):\(port)", seen: [process.output])
        }
        var attempt = 0
        do {
            // A probe every 50 ms, each waiting 50 ms for its answer.
            try await waitUntil("Kamailio to answer OPTIONS", timeout: .seconds(15), every: .milliseconds(50)) {
                guard process.exitStatus == nil else { throw TimedOut(what: "Kamailio (exited)", seen: []) }
                attempt += 1
                return SIPProbe.options(
                    host: "127.0.0.1", port: port, attempt: attempt, timeout: .milliseconds(50)) == 200
            }
        } catch {
            process.stop()
            throw TimedOut(what: "Kamailio to answer OPTIONS on \(port)", seen: [process.output])
        }
    }

    /// Ends Kamailio's whole process group.
    public func stop() { process.stop() }

    /// One request Kamailio received.
    public struct Request: Sendable, Hashable {
        /// The method, e.g. `REGISTER`.
        public var method: String
        /// The From user.
        public var user: String
        /// `udp`, `tcp` or `tls`.
        public var transport: String
        /// The source address and port, e.g. `127.0.0.1:40000` or `::1:40000`.
        public var source: String
        /// The Expires header's value (`<null>` when there is none).
        public var expires: String
        /// How many `X-SwiftPJSUA-Contact-URI-Params` headers (the engine's private carrier of
        /// push parameters, which must never reach the wire) the request had.
        public var privateHeaders: Int
        /// The Contact header's value (`<null>` when there is none).
        public var contact: String
    }

    /// Every request received so far, in order, from the `RX …` lines `kamailio.cfg` logs.
    public var receivedRequests: [Request] {
        process.output.split(whereSeparator: \.isNewline).compactMap { line in
            guard let range = line.range(of: "RX ") else { return nil }
            let fields = line[range.upperBound...].split(separator: " ")
            guard fields.count >= 3 else { return nil }
            func value(_ key: String) -> String {
                fields.first { $0.hasPrefix("\(key)=") }.map { String($0.dropFirst(key.count + 1)) } ?? ""
            }
            let contact = line.range(of: " contact=").map { String(line[$0.upperBound...]) } ?? ""
            return Request(
                method: String(fields[0]), user: value("user"), transport: value("proto"), source: value("src"),
                expires: value("expires"), privateHeaders: Int(value("private")) ?? -1, contact: contact)
        }
    }

    /// Everything Kamailio printed, for failure messages.
    public var output: String { process.output }

    deinit { process.stop() }
}

/// A one-shot SIP OPTIONS probe over UDP.
enum SIPProbe {
    /// Sends OPTIONS to `host:port` and returns the status code of the response, or `nil`
    /// when nothing came within `timeout`.
    static func options(host: String, port: UInt16, attempt: Int, timeout: Duration) -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { return nil }
        let localPort = UInt16(bigEndian: local.sin_port)
        let message = [
            "OPTIONS sip:\(host):\(port) SIP/2.0",
            "Via: SIP/2.0/UDP 127.0.0.1:\(localPort);branch=z9hG4bK-probe-\(localPort)-\(attempt)",
            "Max-Forwards: 70",
            "From: <sip:probe@127.0.0.1:\(localPort)>;tag=probe\(attempt)",
            "To: <sip:\(host):\(port)>",
            "Call-ID: probe-\(localPort)-\(attempt)@127.0.0.1",
            "CSeq: 1 OPTIONS",
            "Content-Length: 0", "", "",
        ].joined(separator: "\r\n")
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_addr.s_addr = inet_addr(host)
        remote.sin_port = port.bigEndian
        let sent = message.utf8CString.withUnsafeBufferPointer { bytes in
            withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count - 1, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard sent > 0 else { return nil }
        var wait = timeval(tv_sec: 0, tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        let received = recv(fd, &buffer, buffer.count, 0)
        guard received > 12 else { return nil }
        let statusLine = String(decoding: buffer[0..<received], as: UTF8.self).prefix { $0 != "\r" }
        let parts = statusLine.split(separator: " ")
        return parts.count >= 2 ? Int(parts[1]) : nil
    }
}

/// A throwaway certificate authority and a server certificate it signed, made with
/// `openssl` for one test.
public struct TestCertificates: Sendable {
    /// The CA's certificate (PEM): trust this to accept the server.
    public let caCertificate: URL
    /// The server's certificate (PEM), for `127.0.0.1` and `localhost`.
    public let serverCertificate: URL
    /// The server's private key (PEM).
    public let serverKey: URL

    /// Makes a CA and a server certificate with subjectAltName `IP:127.0.0.1, DNS:localhost`
    /// and `IP:` each of `addresses` (a ``Topology`` host's, say).
    public static func make(in folder: TemporaryFolder, addresses: [String] = []) async throws -> TestCertificates {
        let ca = folder.file("ca.pem"), caKey = folder.file("ca-key.pem")
        let server = folder.file("server.pem"), serverKey = folder.file("server-key.pem")
        let request = folder.file("server.csr"), extensions = folder.file("server.ext")
        let names = (["IP:127.0.0.1", "DNS:localhost"] + addresses.map { "IP:\($0)" }).joined(separator: ", ")
        try "subjectAltName = \(names)\nextendedKeyUsage = serverAuth\n"
            .write(to: extensions, atomically: true, encoding: .utf8)
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=swift-pjsua test CA",
                "-keyout", caKey.path, "-out", ca.path,
            ],
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", serverKey.path,
                "-out", request.path,
            ],
            [
                "x509", "-req", "-in", request.path, "-CA", ca.path, "-CAkey", caKey.path, "-CAcreateserial",
                "-days", "2", "-extfile", extensions.path, "-out", server.path,
            ],
        ]
        for (index, step) in steps.enumerated() {
            let process = try PeerProcess(
                "openssl-\(index)", executable: "/usr/bin/openssl", arguments: step, folder: folder)
            let status = try await process.waitForExit(timeout: .seconds(30))
            guard status == 0 else { throw TimedOut(what: "openssl \(step[0]) to succeed", seen: [process.output]) }
        }
        return TestCertificates(caCertificate: ca, serverCertificate: server, serverKey: serverKey)
    }
}
