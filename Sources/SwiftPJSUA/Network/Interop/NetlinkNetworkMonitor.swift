#if os(Linux)
    import CPJSUAShim
    import Foundation

    /// Linux's network monitor: a `NETLINK_ROUTE` socket subscribed to link, address and route
    /// changes (IPv4 and IPv6), read on a thread of its own. Changes of the loopback interface
    /// and of routing tables other than the main one are ignored.
    ///
    /// Needs no privilege; a sandbox that refuses `AF_NETLINK` sockets makes
    /// ``changes(debounce:)`` throw ``NetworkMonitorError``.
    public struct NetlinkNetworkMonitor: NetworkMonitor {
        /// Creates the monitor; nothing is opened until ``changes(debounce:)``.
        public init() {}

        /// Opens the socket (throwing ``NetworkMonitorError`` naming `socket` or `bind` and the
        /// errno when that fails) and reads it until the stream's consumer stops.
        public func changes(debounce: Duration) throws(NetworkMonitorError) -> AsyncStream<NetworkPathChange> {
            let fd = cpj_netlink_route_open()
            guard fd >= 0 else {
                throw NetworkMonitorError(operation: "socket(AF_NETLINK) or bind", errorNumber: -fd)
            }
            let (stream, continuation) = AsyncStream<NetworkPathChange>.makeStream(bufferingPolicy: .bufferingNewest(8))
            let reader = NetlinkReader(fd: fd, debounce: debounce, continuation: continuation)
            continuation.onTermination = { _ in reader.stop() }
            let thread = Thread { reader.run() }
            thread.name = "swift-pjsua netlink"
            thread.start()
            return stream
        }
    }

    /// The reading loop: counts change notifications and yields one ``NetworkPathChange`` once
    /// none came for `debounce`.
    private final class NetlinkReader: Sendable {
        let fd: Int32
        let debounce: Duration
        let continuation: AsyncStream<NetworkPathChange>.Continuation
        let isStopped = Protected(false)

        init(fd: Int32, debounce: Duration, continuation: AsyncStream<NetworkPathChange>.Continuation) {
            self.fd = fd
            self.debounce = debounce
            self.continuation = continuation
        }

        func stop() { isStopped.withLock { $0 = true } }

        func run() {
            defer {
                close(fd)
                continuation.finish()
            }
            let clock = ContinuousClock()
            var pending = 0
            var lastNotification = clock.now
            while !isStopped.withLock({ $0 }) {
                // Short polls, so that stop() is noticed within 100 ms.
                var wait = Duration.milliseconds(100)
                if pending > 0 { wait = min(wait, max(.milliseconds(1), debounce - (clock.now - lastNotification))) }
                let count = cpj_netlink_route_read(fd, Int32(wait.milliseconds))
                if count < 0 { return }
                if count > 0 {
                    pending += Int(count)
                    lastNotification = clock.now
                } else if pending > 0, clock.now - lastNotification >= debounce {
                    continuation.yield(NetworkPathChange(notifications: pending))
                    pending = 0
                }
            }
        }
    }
#endif
