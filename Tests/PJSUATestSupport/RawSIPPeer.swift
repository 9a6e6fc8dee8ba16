import Foundation

/// A hand-driven SIP peer on a UDP socket of 127.0.0.1: it sends requests written here and
/// reads responses, for flows no scripted peer can time (a request racing an engine call).
public final class RawSIPPeer: @unchecked Sendable {
    // Unchecked: one test drives it from one task; `fd` and `pending` are not shared.
    private let fd: Int32
    /// The local port the peer's socket is bound to.
    public let port: UInt16
    /// Responses read while waiting for another Call-ID: (Call-ID, status code).
    private var pending: [(String, Int)] = []

    /// Opens and binds the socket.
    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
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
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = destination.bigEndian
        let bytes = Array(text.utf8)
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
        let lines = [
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
        let deadline = ContinuousClock.now + timeout
        while true {
            if let index = pending.firstIndex(where: { $0.0 == callID && $0.1 >= 200 }) {
                return pending.remove(at: index).1
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left, .milliseconds(50)).components.attoseconds / 1_000_000_000_000_000 + 1))
            if ready <= 0 {
                await Task.yield()
                continue
            }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { continue }
            let text = String(decoding: buffer.prefix(count), as: UTF8.self)
            let lines = text.components(separatedBy: "\r\n")
            guard let first = lines.first, first.hasPrefix("SIP/2.0 "),
                  let code = Int(first.dropFirst(8).prefix(3)),
                  let header = lines.first(where: { $0.lowercased().hasPrefix("call-id:") || $0.lowercased().hasPrefix("i:") })
            else { continue }
            let id = header.drop { $0 != ":" }.dropFirst().trimmingCharacters(in: .whitespaces)
            pending.append((id, code))
        }
    }
}
