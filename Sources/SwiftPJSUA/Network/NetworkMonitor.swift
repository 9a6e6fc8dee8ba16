import Foundation

/// Tells the engine when the host's network changed, for
/// ``NetworkChangeHandling/automatic(_:)``.
///
/// ``NetworkMonitors/system`` is the platform's: netlink on Linux, `NWPathMonitor` on Apple
/// platforms. Conform your own type to feed changes you detect otherwise (a VPN's callback,
/// a reachability library).
public protocol NetworkMonitor: Sendable {
    /// Starts watching and returns the changes: one element after a burst of changes once the
    /// network has been quiet for `debounce` (so an interface that flaps five times in two
    /// seconds gives one element). The monitor stops when the stream's consumer stops.
    /// - Throws: ``NetworkMonitorError`` when the system refuses to report changes.
    func changes(debounce: Duration) throws(NetworkMonitorError) -> AsyncStream<NetworkPathChange>
}

/// One settled change of the host's network, after ``NetworkMonitor/changes(debounce:)``'s
/// quiet period.
public struct NetworkPathChange: Sendable, Hashable {
    /// How many notifications of the system (address, route or link changes) the change
    /// gathers; at least 1.
    public var notifications: Int

    /// Creates a change.
    public init(notifications: Int) { self.notifications = notifications }
}

/// The system refused to report network changes: on Linux, no netlink socket could be
/// opened or bound (a sandbox without `AF_NETLINK`, a seccomp filter), or the platform has
/// no monitor. The engine then works with ``NetworkChangeHandling/manual`` and explicit
/// ``PJSUA/handleNetworkChange(_:)`` calls.
public struct NetworkMonitorError: LocalizedError, Sendable, Hashable, CustomStringConvertible {
    /// The system call that failed, for example `socket(AF_NETLINK)`.
    public var operation: String
    /// The `errno` value, 0 when there is none (no monitor on this platform).
    public var errorNumber: Int32

    /// Creates an error.
    public init(operation: String, errorNumber: Int32) {
        self.operation = operation
        self.errorNumber = errorNumber
    }

    /// For example `cannot watch the network: socket(AF_NETLINK) failed: Operation not permitted (1)`.
    public var description: String {
        guard errorNumber != 0 else { return "cannot watch the network: \(operation)" }
        let reason = String(cString: strerror(errorNumber))
        return "cannot watch the network: \(operation) failed: \(reason) (\(errorNumber))"
    }

    /// The same as ``description``.
    public var errorDescription: String? { description }
}

/// The monitors the engine ships.
public enum NetworkMonitors {
    /// The platform's monitor: ``NetlinkNetworkMonitor`` on Linux, `PathNetworkMonitor` (compiled by Xcode only) where
    /// Apple's Network framework exists, else one whose ``NetworkMonitor/changes(debounce:)``
    /// throws.
    public static var system: any NetworkMonitor {
        #if os(Linux)
            NetlinkNetworkMonitor()
        #elseif canImport(Network)
            PathNetworkMonitor()
        #else
            UnavailableNetworkMonitor()
        #endif
    }
}

/// A platform without a network monitor: ``changes(debounce:)`` always throws.
struct UnavailableNetworkMonitor: NetworkMonitor {
    func changes(debounce: Duration) throws(NetworkMonitorError) -> AsyncStream<NetworkPathChange> {
        throw NetworkMonitorError(operation: "no network monitor on this platform", errorNumber: 0)
    }
}

/// How the engine follows network changes, ``Configuration/networkChangeHandling``.
public enum NetworkChangeHandling: Sendable {
    /// The app calls ``PJSUA/handleNetworkChange(_:)`` itself. The default.
    case manual
    /// The engine watches the network and calls ``PJSUA/handleNetworkChange(_:)`` after
    /// each settled change.
    case automatic(AutomaticNetworkChange)
}

/// The settings of ``NetworkChangeHandling/automatic(_:)``.
public struct AutomaticNetworkChange: Sendable {
    /// What reports the changes. Default ``NetworkMonitors/system``.
    public var monitor: any NetworkMonitor
    /// How long the network must stay quiet after a change before the engine acts: a flap
    /// (down and up within this time) gives one change. 50 ms to 1 min; default 500 ms.
    public var debounce: Duration
    /// How each change is handled.
    public var options: NetworkChangeOptions

    /// Creates the settings: the platform's monitor, 500 ms of quiet, default options.
    public init(
        monitor: any NetworkMonitor = NetworkMonitors.system, debounce: Duration = .milliseconds(500),
        options: NetworkChangeOptions = NetworkChangeOptions()
    ) {
        self.monitor = monitor
        self.debounce = debounce
        self.options = options
    }
}

extension NetworkChangeHandling: Validatable {
    func validate() throws(PJSUAUsageError) {
        if case .automatic(let automatic) = self { try automatic.validate() }
    }
}

extension AutomaticNetworkChange: Validatable {
    func validate() throws(PJSUAUsageError) {
        guard debounce >= .milliseconds(50), debounce <= .seconds(60) else {
            throw .invalidConfiguration("the network monitor's debounce must be 50 ms to 1 min, got \(debounce)")
        }
        guard options.deadline > .zero, options.deadline <= PJSUA.longestNetworkChangeDeadline,
            options.listenerRestartDelay >= .zero,
            options.listenerRestartDelay <= PJSUA.longestListenerRestartDelay
        else {
            throw .invalidConfiguration(
                "network change options: deadline must be (0, 5 min] and listenerRestartDelay 0 ms to 10 s")
        }
    }
}
