import Foundation

/// A hand-driven SIP peer on a UDP socket of 127.0.0.1: it sends requests written here and
/// reads responses, for flows no scripted peer can time (a request racing an engine call).
public final class RawSIPPeer: @unchecked Sendable {
    // Unchecked: one test drives it from one task; `fd` and `pending` are not shared.
    private let fd: Int32
    /// The local port the peer's socket is bound to.
    public let port: UInt16
    /// Responses read while waiting for another Call-ID or status.
    private var pending: [RawSIPResponse] = []
    /// Requests read while waiting for something else.
    private var pendingRequests: [RawSIPReceivedRequest] = []

    /// Opens and binds the socket.
    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            Glibc.close(fd)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    public func close() { Glibc.close(fd) }

    /// Sends `text` (lines joined with CRLF) to 127.0.0.1:`to`.
    public func send(_ text: String, to destination: UInt16) throws {
        try send(bytes: Array(text.utf8), to: destination)
    }

    /// Sends `bytes` as one datagram to 127.0.0.1:`to` (up to 65,507 bytes on loopback).
    public func send(bytes: [UInt8], to destination: UInt16) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = destination.bigEndian
        let sent = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard sent == bytes.count else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    /// An INVITE with a PCMU offer to `sip:race@127.0.0.1:<to>`, its Call-ID `callID`.
    public func sendInvite(to destination: UInt16, callID: String) throws {
        let sdp = [
            "v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0",
            "m=audio \(Int(port) + 2) RTP/AVP 0", "a=rtpmap:0 PCMU/8000", "",
        ].joined(separator: "\r\n")
        try send(request("INVITE", to: destination, callID: callID, cseq: 1, body: sdp), to: destination)
    }

    /// The ACK for a non-2xx final response to the INVITE `callID` (RFC 3261 §17.1.1.3; the
    /// To tag is the server's, which a stateless peer may leave out for a test like this).
    public func sendAck(to destination: UInt16, callID: String) throws {
        try send(request("ACK", to: destination, callID: callID, cseq: 1, body: ""), to: destination)
    }

    private func request(_ method: String, to destination: UInt16, callID: String, cseq: Int, body: String) -> String {
        let lines =
            [
                "\(method) sip:race@127.0.0.1:\(destination) SIP/2.0",
                // One branch per Call-ID: the ACK of a non-2xx response belongs to the INVITE's
                // transaction (RFC 3261 §17.1.1.3).
                "Via: SIP/2.0/UDP 127.0.0.1:\(port);branch=z9hG4bK-\(callID.hashValue.magnitude)",
                "Max-Forwards: 70",
                "From: <sip:peer@127.0.0.1:\(port)>;tag=peer-\(port)",
                "To: <sip:race@127.0.0.1:\(destination)>",
                "Call-ID: \(callID)",
                "CSeq: \(cseq) \(method)",
                "Contact: <sip:peer@127.0.0.1:\(port)>",
            ] + (body.isEmpty ? [] : ["Content-Type: application/sdp"]) + ["Content-Length: \(body.utf8.count)", ""]
        return lines.joined(separator: "\r\n") + "\r\n" + body
    }

    /// The first final response (200–699) to `callID`, or nil after `timeout`. Responses to
    /// other Call-IDs read meanwhile are kept for their own calls.
    public func finalResponse(callID: String, timeout: Duration) async throws -> Int? {
        try await response(callID: callID, timeout: timeout)?.statusCode
    }

    /// The first response to `callID` that `matching` accepts (by default a final one,
    /// 200–699), or nil after `timeout`. Other responses read meanwhile are kept.
    public func response(
        callID: String, timeout: Duration, matching: (RawSIPResponse) -> Bool = { $0.statusCode >= 200 }
    ) async throws -> RawSIPResponse? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let index = pending.firstIndex(where: { $0.callID == callID && matching($0) }) {
                return pending.remove(at: index)
            }
            guard await readMessage(until: deadline) else { return nil }
        }
    }

    /// The first request with `method` and `callID` (any Call-ID when nil) that arrived (or
    /// arrives within `timeout`), or nil. Responses read meanwhile are kept.
    public func receivedRequest(
        _ method: String, callID: String? = nil, timeout: Duration
    ) async -> RawSIPReceivedRequest? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let matches = { (request: RawSIPReceivedRequest) in
                request.method == method && (callID ?? request.callID) == request.callID
            }
            if let index = pendingRequests.firstIndex(where: matches) {
                return pendingRequests.remove(at: index)
            }
            guard await readMessage(until: deadline) else { return nil }
        }
    }

    /// Reads one datagram (waiting at most 50 ms) into `pending` or `pendingRequests`;
    /// false once `deadline` has passed.
    private func readMessage(until deadline: ContinuousClock.Instant) async -> Bool {
        let left = deadline - ContinuousClock.now
        guard left > .zero else { return false }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(
            &poller, 1, Int32(min(left, .milliseconds(50)).components.attoseconds / 1_000_000_000_000_000 + 1))
        if ready <= 0 {
            await Task.yield()
            return true
        }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return true }
        let bytes = Array(buffer.prefix(count))
        if let response = RawSIPResponse(bytes) {
            pending.append(response)
        } else if let request = RawSIPReceivedRequest(bytes) {
            pendingRequests.append(request)
        }
        return true
    }

    /// A response from this peer to `request`: its Via, From, To (with `toTag` added when it
    /// has none), Call-ID and CSeq, no body.
    public func respond(_ statusCode: Int, _ reason: String, to request: RawSIPReceivedRequest, toTag: String? = nil)
        throws
    {
        var lines = ["SIP/2.0 \(statusCode) \(reason)"]
        for name in ["Via", "From", "To", "Call-ID", "CSeq"] {
            for value in request.values(name) {
                let tagged =
                    name == "To" && !value.contains(";tag=") ? value + (toTag.map { ";tag=\($0)" } ?? "") : value
                lines.append("\(name): \(tagged)")
            }
        }
        lines += ["Content-Length: 0", "", ""]
        try send(lines.joined(separator: "\r\n"), to: request.sourcePort)
    }

    /// A request from this peer over UDP (see ``RawSIPRequest``), as bytes on the wire.
    public func request(_ request: RawSIPRequest, to destination: UInt16) -> [UInt8] {
        request.bytes(transport: "UDP", from: port, to: destination)
    }
}

/// A SIP request written field by field, for messages no well-behaved peer sends: a wrong
/// Content-Length, a NUL byte in the body, an unknown URI scheme, a merged request.
public struct RawSIPRequest: Sendable {
    public var method: String
    /// The Request-URI; nil is `sip:engine@127.0.0.1:<destination>`.
    public var requestURI: String?
    public var callID: String
    public var cseq: Int = 1
    /// The top Via's branch (the transaction).
    public var branch: String
    public var fromTag: String = "raw-from"
    /// The From header's name-addr (before `;tag=`); nil is `<sip:peer@127.0.0.1:<port>>`.
    public var fromAddress: String?
    public var toTag: String?
    /// Extra header lines, without CRLF.
    public var headers: [String] = []
    public var contentType: String?
    public var body: [UInt8] = []
    /// The Content-Length written; nil writes the body's real length.
    public var contentLength: Int?

    public init(method: String, callID: String, branch: String = "z9hG4bK-\(UUID().uuidString)") {
        self.method = method
        self.callID = callID
        self.branch = branch
    }

    /// The message as sent by a peer on 127.0.0.1:`from` over `transport` ("UDP", "TCP").
    public func bytes(transport: String, from port: UInt16, to destination: UInt16) -> [UInt8] {
        var lines =
            [
                "\(method) \(requestURI ?? "sip:engine@127.0.0.1:\(destination)") SIP/2.0",
                "Via: SIP/2.0/\(transport) 127.0.0.1:\(port);branch=\(branch);rport",
                "Max-Forwards: 70",
                "From: \(fromAddress ?? "<sip:peer@127.0.0.1:\(port)>");tag=\(fromTag)",
                "To: <sip:engine@127.0.0.1:\(destination)>" + (toTag.map { ";tag=\($0)" } ?? ""),
                "Call-ID: \(callID)",
                "CSeq: \(cseq) \(method)",
                "Contact: <sip:peer@127.0.0.1:\(port);transport=\(transport.lowercased())>",
            ] + headers
        if let contentType { lines.append("Content-Type: \(contentType)") }
        lines.append("Content-Length: \(contentLength ?? body.count)")
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8) + body
    }
}

/// A response as it arrived: the status code, its header lines and the raw text.
public struct RawSIPResponse: Sendable, CustomStringConvertible {
    public let statusCode: Int
    /// The header lines as (name, value), in order; compact names as sent.
    public let headers: [(name: String, value: String)]
    public let text: String

    /// Parses the start line and headers of `bytes`; nil when it is no SIP response.
    public init?(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let head = text.components(separatedBy: "\r\n\r\n").first ?? text
        let lines = head.components(separatedBy: "\r\n")
        guard let first = lines.first, first.hasPrefix("SIP/2.0 "), let code = Int(first.dropFirst(8).prefix(3)) else {
            return nil
        }
        statusCode = code
        self.text = text
        headers = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (
                String(line[..<colon]).trimmingCharacters(in: .whitespaces),
                String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            )
        }
    }

    /// The values of every header named `name` (or its compact form), in order.
    public func values(_ name: String, compact: String? = nil) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() || $0.name.lowercased() == compact?.lowercased() }
            .map(\.value)
    }

    /// The Call-ID.
    public var callID: String { values("Call-ID", compact: "i").first ?? "" }
    /// The tag of the To header, if any.
    public var toTag: String? {
        guard let to = values("To", compact: "t").first, let range = to.range(of: ";tag=") else { return nil }
        return String(to[range.upperBound...].prefix { $0 != ";" && $0 != ">" && $0 != " " })
    }
    /// The branch of the top Via.
    public var branch: String? {
        guard let via = values("Via", compact: "v").first, let range = via.range(of: "branch=") else { return nil }
        return String(via[range.upperBound...].prefix { $0 != ";" && $0 != "," && $0 != " " })
    }
    /// The option tags of every header named `name` (Unsupported, Supported, Require).
    public func optionTags(_ name: String, compact: String? = nil) -> [String] {
        values(name, compact: compact).flatMap { $0.split(separator: ",") }.map {
            $0.trimmingCharacters(in: .whitespaces)
        }
    }

    public var description: String { text }
}

/// A request as it arrived at a ``RawSIPPeer``: method, header lines and the raw text.
public struct RawSIPReceivedRequest: Sendable, CustomStringConvertible {
    public let method: String
    public let requestURI: String
    /// The header lines as (name, value), in order; compact names expanded for Via, From,
    /// To, Call-ID and Contact.
    public let headers: [(name: String, value: String)]
    public let text: String

    /// Parses the request line and headers of `bytes`; nil when it is no SIP request.
    public init?(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let head = text.components(separatedBy: "\r\n\r\n").first ?? text
        let lines = head.components(separatedBy: "\r\n")
        let parts = (lines.first ?? "").split(separator: " ")
        guard parts.count == 3, parts[2] == "SIP/2.0" else { return nil }
        method = String(parts[0])
        requestURI = String(parts[1])
        self.text = text
        let compact = ["v": "Via", "f": "From", "t": "To", "i": "Call-ID", "m": "Contact"]
        headers = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = String(line[..<colon]).trimmingCharacters(in: .whitespaces)
            return (
                compact[name.lowercased()] ?? name,
                String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            )
        }
    }

    /// The values of every header named `name` (case-insensitive), in order.
    public func values(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    /// The Call-ID.
    public var callID: String { values("Call-ID").first ?? "" }

    /// The port of the top Via's sent-by (where a response goes, on 127.0.0.1).
    public var sourcePort: UInt16 {
        guard let via = values("Via").first, let sentBy = via.split(separator: " ").dropFirst().first else { return 0 }
        let hostPort = sentBy.prefix { $0 != ";" }
        return UInt16(hostPort.split(separator: ":").last ?? "") ?? 0
    }

    public var description: String { text }
}

/// A SIP peer on one TCP connection from 127.0.0.1: it writes raw bytes and reads the
/// responses framed by their Content-Length, and sees the connection close.
public final class RawSIPStream: @unchecked Sendable {
    // Unchecked: one test drives it from one task; `fd` and `buffer` are not shared.
    private let fd: Int32
    /// The local port of the connection.
    public let port: UInt16
    private var buffer: [UInt8] = []
    private var closedByPeer = false

    /// Connects to 127.0.0.1:`destination`.
    public init(to destination: UInt16) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = destination.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard connected == 0, named == 0 else {
            let code = errno
            Glibc.close(fd)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        self.fd = fd
        port = UInt16(bigEndian: local.sin_port)
    }

    public func close() { Glibc.close(fd) }

    /// Writes all of `bytes`; a connection the engine closed meanwhile is no error (the test
    /// reads what it answered before), so the count written is returned.
    @discardableResult
    public func send(bytes: [UInt8]) -> Int {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return Glibc.send(fd, base + written, bytes.count - written, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { break }
            written += count
        }
        return written
    }

    /// A request from this connection (see ``RawSIPRequest``), as bytes on the wire.
    public func request(_ request: RawSIPRequest, to destination: UInt16) -> [UInt8] {
        request.bytes(transport: "TCP", from: port, to: destination)
    }

    /// The next complete response on the stream, or nil after `timeout` or at its end.
    public func response(timeout: Duration) async -> RawSIPResponse? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let message = takeMessage() { return RawSIPResponse(message) }
            if closedByPeer { return nil }
            guard await read(until: deadline) else { return nil }
        }
    }

    /// Whether the engine closes the connection within `timeout` (after any responses).
    public func closes(within timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !closedByPeer {
            guard await read(until: deadline) else { return false }
        }
        return true
    }

    /// Reads once; false when the deadline passed first.
    private func read(until deadline: ContinuousClock.Instant) async -> Bool {
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(
                &poller, 1, Int32(min(left, .milliseconds(50)).components.attoseconds / 1_000_000_000_000_000 + 1))
            if ready <= 0 {
                await Task.yield()
                continue
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 {
                closedByPeer = true
            } else {
                buffer += chunk.prefix(count)
            }
            return true
        }
    }

    /// One message off the front of the buffer when its headers and body are all there.
    private func takeMessage() -> [UInt8]? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard buffer.count >= 4,
            let end = (0...(buffer.count - 4)).first(where: { Array(buffer[$0..<($0 + 4)]) == separator })
        else { return nil }
        let head = String(decoding: buffer[..<end], as: UTF8.self)
        let length =
            head.components(separatedBy: "\r\n").compactMap { line -> Int? in
                let lower = line.lowercased()
                guard lower.hasPrefix("content-length:") || lower.hasPrefix("l:") else { return nil }
                return Int(line.drop { $0 != ":" }.dropFirst().trimmingCharacters(in: .whitespaces))
            }.first ?? 0
        let total = end + 4 + length
        guard buffer.count >= total else { return nil }
        let message = Array(buffer[..<total])
        buffer.removeFirst(total)
        return message
    }
}
