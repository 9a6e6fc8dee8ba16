import Foundation

/// A `dnsmasq` authoritative for one test domain on 127.0.0.1, serving only the records a
/// test gives it (no upstream, no `/etc/hosts`), and logging every query it answers.
public final class Dnsmasq: Sendable {
    /// One SRV record (RFC 2782).
    public struct SRV: Sendable {
        /// The owner name, for example `_sip._udp.example.test`.
        public var service: String
        /// The target host, for example `reg1.example.test`.
        public var target: String
        public var port: UInt16
        public var priority: Int
        public var weight: Int

        public init(service: String, target: String, port: UInt16, priority: Int, weight: Int = 50) {
            self.service = service
            self.target = target
            self.port = port
            self.priority = priority
            self.weight = weight
        }
    }

    /// The UDP (and TCP) port on 127.0.0.1.
    public let port: UInt16
    private let process: PeerProcess

    private init(port: UInt16, process: PeerProcess) {
        self.port = port
        self.process = process
    }

    /// Starts dnsmasq and waits until it answers a query.
    /// - Parameters:
    ///   - domain: the zone it answers for; names in it without records get NXDOMAIN.
    ///   - srv: SRV records.
    ///   - hosts: A records, name → IPv4 address.
    public static func start(
        folder: TemporaryFolder, domain: String, srv: [SRV], hosts: [String: String], name: String = "dnsmasq"
    ) async throws -> Dnsmasq {
        let port = FreePort.tcpAndUDP()
        var arguments = [
            "--keep-in-foreground", "--no-resolv", "--no-hosts", "--conf-file=/dev/null",
            "--listen-address=127.0.0.1", "--bind-interfaces", "--port=\(port)",
            "--pid-file=\(folder.file("\(name).pid").path)", "--log-facility=-", "--log-queries",
            "--user=\(NSUserName())", "--local=/\(domain)/",
        ]
        arguments += srv.map { "--srv-host=\($0.service),\($0.target),\($0.port),\($0.priority),\($0.weight)" }
        arguments += hosts.sorted { $0.key < $1.key }.map { "--host-record=\($0.key),\($0.value)" }
        let process = try PeerProcess(name, executable: "/usr/sbin/dnsmasq", arguments: arguments, folder: folder)
        let dnsmasq = Dnsmasq(port: port, process: process)
        try await dnsmasq.waitUntilAnswering(probe: hosts.keys.sorted().first ?? domain)
        return dnsmasq
    }

    /// Sends an A query every 50 ms until one gets an answer (at most 10 s).
    private func waitUntilAnswering(probe: String) async throws {
        var id: UInt16 = 0
        do {
            // A query every 50 ms, each waiting 50 ms for its answer.
            try await waitUntil("dnsmasq to answer", timeout: .seconds(10), every: .milliseconds(50)) {
                guard process.exitStatus == nil else { throw TimedOut(what: "dnsmasq (exited)", seen: []) }
                id &+= 1
                return DNSProbe.query(probe, port: port, id: id, timeout: .milliseconds(50))
            }
        } catch {
            stop()
            throw TimedOut(what: "dnsmasq to answer on 127.0.0.1:\(port)", seen: [process.output])
        }
    }

    /// Freezes the server (SIGSTOP): queries then get no answer at all, as from a server that
    /// is down behind a firewall (no ICMP, its socket stays bound).
    public func pause() { kill(-process.pid, SIGSTOP) }

    /// Lets a paused server run again (SIGCONT); it answers the queries that queued meanwhile.
    public func resume() { kill(-process.pid, SIGCONT) }

    /// Ends dnsmasq (resuming it first, so that it can exit on SIGTERM).
    public func stop() {
        resume()
        process.stop()
    }

    /// The names queried so far with their type, from the `query[TYPE] name from …` log lines,
    /// for example `SRV _sip._udp.example.test`.
    public var queries: [String] {
        process.output.split(whereSeparator: \.isNewline).compactMap { line in
            guard let start = line.range(of: "query["), let close = line[start.upperBound...].firstIndex(of: "]") else {
                return nil
            }
            let type = line[start.upperBound..<close]
            let name = line[line.index(after: close)...].split(separator: " ").first ?? ""
            return "\(type) \(name)"
        }
    }

    /// Everything dnsmasq printed, for failure messages.
    public var output: String { process.output }

    deinit { stop() }
}

/// A one-shot DNS query over UDP.
enum DNSProbe {
    /// Sends an A query for `name` to 127.0.0.1:`port`; whether any response came within `timeout`.
    static func query(_ name: String, port: UInt16, id: UInt16, timeout: Duration) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var packet: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xff), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in name.split(separator: ".") {
            packet.append(UInt8(label.utf8.count))
            packet += Array(label.utf8)
        }
        packet += [0, 0, 1, 0, 1]
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        remote.sin_port = port.bigEndian
        let sent = packet.withUnsafeBufferPointer { bytes in
            withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard sent > 0 else { return false }
        var wait = timeval(tv_sec: 0, tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 512)
        return recv(fd, &buffer, buffer.count, 0) >= 12 && buffer[0] == UInt8(id >> 8) && buffer[1] == UInt8(id & 0xff)
    }
}
