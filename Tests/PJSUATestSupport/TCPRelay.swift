import Foundation

/// A TCP relay on 127.0.0.1 in front of a peer (`Tests/Peers/tcp_relay.py`): the stand-in
/// for a NAT or firewall that can silently forget every connection it carries.
///
/// Each accepted connection is forwarded to the target. ``blackhole()`` kills the flows open
/// at that moment without telling either end: their sockets stay open, nothing is forwarded
/// any more, no FIN or RST is sent. Connections accepted afterwards are forwarded as usual.
public final class TCPRelay: Sendable {
    /// The port the relay accepts connections on.
    public let port: UInt16
    private let controlPort: UInt16
    private let process: PeerProcess

    private init(port: UInt16, controlPort: UInt16, process: PeerProcess) {
        self.port = port
        self.controlPort = controlPort
        self.process = process
    }

    /// Starts the relay towards `127.0.0.1:targetPort` and waits until it listens.
    /// - Parameters:
    ///   - port: the port to accept on (a peer that must name the relay in its messages
    ///     needs it first); any free one when `nil`.
    ///   - swallowingPongs: drop blank-line packets coming back from the target, as if it
    ///     did not answer RFC 5626 keep-alive pings.
    /// - Throws: ``TimedOut`` when it has not printed its ports within 10 s.
    public static func start(
        folder: TemporaryFolder, targetPort: UInt16, port: UInt16? = nil, swallowingPongs: Bool = false,
        name: String = "tcp-relay"
    ) async throws -> TCPRelay {
        let script = Repository.root.appendingPathComponent("Tests/Peers/tcp_relay.py").path
        let process = try PeerProcess(
            name, executable: "/usr/bin/python3",
            arguments: ["-u", script, "--target", "127.0.0.1:\(targetPort)", "--port", String(port ?? 0)]
                + (swallowingPongs ? ["--swallow-pongs"] : []),
            folder: folder)
        do {
            try await process.waitForOutput(containing: "\n", timeout: .seconds(10))
        } catch {
            process.stop()
            throw error
        }
        let line = process.output.split(whereSeparator: \.isNewline).first { $0.hasPrefix("listening ") } ?? ""
        func value(_ key: String) -> UInt16? {
            line.split(separator: " ").first { $0.hasPrefix("\(key)=") }.flatMap { UInt16($0.dropFirst(key.count + 1)) }
        }
        guard let port = value("relay"), let controlPort = value("control") else {
            process.stop()
            throw TimedOut(what: "the relay to print its ports", seen: [process.output])
        }
        return TCPRelay(port: port, controlPort: controlPort, process: process)
    }

    /// Silently kills every connection open now; returns how many there were.
    /// - Throws: ``TimedOut`` when the relay does not answer the command within 5 s.
    @discardableResult
    public func blackhole() throws -> Int {
        let answer = try command("blackhole")
        guard answer.hasPrefix("blackholed "), let count = Int(answer.dropFirst("blackholed ".count)) else {
            throw TimedOut(what: "the relay to confirm the blackhole", seen: [answer, process.output])
        }
        return count
    }

    /// The number of connections accepted so far (the dead ones included).
    public var acceptedConnections: Int {
        process.output.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("accepted ") }.count
    }

    /// Bytes that arrived on a blackholed connection from the client side (and were dropped).
    public var droppedClientBytes: Int {
        process.output.split(whereSeparator: \.isNewline).reduce(0) { total, line in
            let fields = line.split(separator: " ")
            guard fields.count == 6, fields[0] == "dropped", fields[5] == "client" else { return total }
            return total + (Int(fields[2]) ?? 0)
        }
    }

    /// How many blank-line packets (RFC 5626 keep-alive pings or pongs, seen in clear text
    /// over TCP) the relay forwarded from `side` (`client` or `upstream`).
    public func forwardedCRLF(from side: String) -> Int {
        process.output.split(whereSeparator: \.isNewline).filter {
            $0.hasPrefix("crlf ") && $0.hasSuffix(" from \(side)")
        }.count
    }

    /// Waits until the relay has forwarded `count` blank-line packets from `side`.
    /// - Throws: ``TimedOut`` when `timeout` passes first.
    public func waitForCRLF(from side: String, count: Int, timeout: Duration) async throws {
        try await waitUntil("\(count) keep-alive packets from the \(side) side", timeout: timeout, seen: { output }) {
            forwardedCRLF(from: side) >= count
        }
    }

    /// Everything the relay printed, for failure messages.
    public var output: String { process.output }

    /// Ends the relay (and with it every connection it holds).
    public func stop() { process.stop() }

    /// Sends one command line to the control port and returns the relay's one-line answer.
    private func command(_ text: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TimedOut(what: "a control socket", seen: []) }
        defer { close(fd) }
        var wait = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = controlPort.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { throw TimedOut(what: "the relay's control port \(controlPort)", seen: [output]) }
        let line = Array((text + "\n").utf8)
        guard send(fd, line, line.count, 0) == line.count else {
            throw TimedOut(what: "the relay to take \"\(text)\"", seen: [output])
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while !answer.contains(UInt8(ascii: "\n")) {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { throw TimedOut(what: "the relay to answer \"\(text)\"", seen: [output]) }
            answer += buffer[0..<count]
        }
        return String(decoding: answer.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }

    deinit { process.stop() }
}
