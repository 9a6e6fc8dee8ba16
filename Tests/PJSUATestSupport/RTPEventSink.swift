import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A UDP socket on 127.0.0.1 that reads the RTP a peer's SDP sends it and decodes RFC 4733
/// telephone events: what a far end actually received, on the wire, for tests whose far end
/// (sipp) cannot report digits itself. Reads on a thread of its own until ``close()``.
public final class RTPEventSink: @unchecked Sendable {
    /// The local port to put in an SDP `m=audio` line.
    public let port: UInt16
    /// The payload type read as telephone events (`a=rtpmap:PT telephone-event/8000`).
    public let eventPayloadType: UInt8
    private let fd: Int32
    private let lock = NSLock()
    private var packetCount = 0
    private var ended: [(timestamp: UInt32, event: UInt8)] = []
    private var closed = false
    private let done = DispatchSemaphore(value: 0)

    /// Binds an ephemeral port of 127.0.0.1 and starts reading.
    /// - Throws: ``SocketError`` when the socket cannot be made or bound.
    public init(eventPayloadType: UInt8 = 101) throws {
        self.eventPayloadType = eventPayloadType
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError(operation: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            Glibc.close(fd)
            throw SocketError(operation: "bind", code: code)
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
        var wait = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        Thread.detachNewThread { [self] in readLoop() }
    }

    deinit { close() }

    /// RTP packets read so far, of any payload type.
    public var packets: Int { lock.withLock { packetCount } }

    /// The telephone events that ended (E bit set), once each however many times their end
    /// packet came (RFC 4733 §2.5.1.4 repeats it), in arrival order, as digit characters
    /// (`0`–`9`, `*`, `#`, `A`–`D`).
    public var digits: String {
        let table = Array("0123456789*#ABCD")
        return String(lock.withLock { ended }.map { $0.event < 16 ? table[Int($0.event)] : "?" })
    }

    /// Stops reading and closes the socket; waits for the reading thread to end.
    public func close() {
        let first = lock.withLock {
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        done.wait()
        Glibc.close(fd)
    }

    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 2048)
        while !lock.withLock({ closed }) {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count >= 12, buffer[0] >> 6 == 2 else { continue }
            let header = 12 + Int(buffer[0] & 0x0f) * 4
            let timestamp = buffer[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            lock.withLock {
                packetCount += 1
                guard buffer[1] & 0x7f == eventPayloadType, count >= header + 4, buffer[header + 1] & 0x80 != 0,
                    !ended.contains(where: { $0.timestamp == timestamp })
                else { return }
                ended.append((timestamp, buffer[header]))
            }
        }
        done.signal()
    }
}

/// A socket call that failed, with its errno.
public struct SocketError: Error, CustomStringConvertible {
    /// The call that failed (`socket`, `bind`).
    public let operation: String
    /// Its errno.
    public let code: Int32
    /// The call and errno's text.
    public var description: String { "\(operation): \(String(cString: strerror(code)))" }
}
