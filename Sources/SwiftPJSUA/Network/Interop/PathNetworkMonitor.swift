#if canImport(Network) && !os(Linux)
    import Foundation
    import Network

    /// Apple platforms' network monitor over `NWPathMonitor`: a change is a new path (another
    /// interface, another status, gained or lost IPv4/IPv6) after the first one the monitor
    /// reports, which describes the network at start.
    ///
    /// Compiled only by Xcode: this repository's CI runs on Linux.
    public struct PathNetworkMonitor: NetworkMonitor {
        /// Creates the monitor; nothing runs until ``changes(debounce:)``.
        public init() {}

        /// Starts an `NWPathMonitor` on a queue of its own; it is cancelled when the stream's
        /// consumer stops. Never throws.
        public func changes(debounce: Duration) throws(NetworkMonitorError) -> AsyncStream<NetworkPathChange> {
            let (stream, continuation) = AsyncStream<NetworkPathChange>.makeStream(bufferingPolicy: .bufferingNewest(8))
            let monitor = NWPathMonitor()
            let queue = DispatchQueue(label: "swift-pjsua network path")
            let state = PathDebounce(debounce: debounce, queue: queue, continuation: continuation)
            monitor.pathUpdateHandler = { path in state.update(path) }
            continuation.onTermination = { _ in monitor.cancel() }
            monitor.start(queue: queue)
            return stream
        }
    }

    /// The debounce of ``PathNetworkMonitor``; touched on its queue only.
    // Safety: every property is read and written on `queue`, the serial queue the path monitor
    // calls back on and the timer runs on.
    private final class PathDebounce: @unchecked Sendable {
        let debounce: Duration
        let queue: DispatchQueue
        let continuation: AsyncStream<NetworkPathChange>.Continuation
        var last: NWPath?
        var pending = 0
        var timer: DispatchWorkItem?

        init(debounce: Duration, queue: DispatchQueue, continuation: AsyncStream<NetworkPathChange>.Continuation) {
            self.debounce = debounce
            self.queue = queue
            self.continuation = continuation
        }

        func update(_ path: NWPath) {
            defer { last = path }
            guard let last, last != path else { return }
            pending += 1
            timer?.cancel()
            let item = DispatchWorkItem { [self] in
                continuation.yield(NetworkPathChange(notifications: pending))
                pending = 0
            }
            timer = item
            let parts = debounce.components
            let nanoseconds = Int(parts.seconds) * 1_000_000_000 + Int(parts.attoseconds / 1_000_000_000)
            queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: item)
        }
    }
#endif
