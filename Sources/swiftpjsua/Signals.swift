import CSignalGuard
import Foundation
import SwiftPJSUA

/// Shuts the engine down cleanly on SIGINT or SIGTERM; the command's event loop then ends.
///
/// The signals are caught from before `main` (`CSignalGuard`), so one that arrives while the
/// process or the engine is still starting is not lost. The handler cannot shut down an
/// engine that has not started yet, so each command asks ``shutDownIfSignalled(_:)`` right
/// after `start` returns.
final class SignalShutdown: Sendable {
    static let shared = SignalShutdown()

    /// The engine a signal shuts down, once a command has attached it.
    private let engine = Protected<PJSUA?>(nil)

    private init() {}

    /// Starts reading the signals caught so far and from now on. Call once; keep the returned
    /// source alive while the tool runs.
    func install() -> (any DispatchSourceRead)? {
        let fd = csg_signal_fd()
        guard fd >= 0 else { return nil }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: .global())
        source.setEventHandler { [self] in
            // Drain the pipe; which signal came first is kept by the handler itself.
            var byte: UInt8 = 0
            while read(fd, &byte, 1) == 1 {}
            if let engine = self.engine.withLock({ $0 }) { Task { await engine.shutdown() } }
        }
        source.resume()
        return source
    }

    /// The engine a signal shuts down.
    func attach(_ engine: PJSUA) {
        self.engine.withLock { $0 = engine }
    }

    /// Call right after `start`: when a signal came before or during it, shuts the engine
    /// down and returns `true`.
    func shutDownIfSignalled(_ engine: PJSUA) async -> Bool {
        guard received != nil else { return false }
        await engine.shutdown()
        return true
    }

    /// The first signal caught, from process start on.
    var received: Int32? { csg_first_signal() == 0 ? nil : csg_first_signal() }
}

/// `kill -USR1 <pid>`: the tool handles a network change now (`handleNetworkChange`), for
/// machines where `--follow-network` cannot watch the network, or to force one. The steps
/// are printed as `network-change` lines. Keep the returned source alive while running.
func networkChangeOnSIGUSR1(_ engine: PJSUA) -> any DispatchSourceSignal {
    signal(SIGUSR1, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGUSR1)
    source.setEventHandler {
        Task {
            do { _ = try await engine.handleNetworkChange() } catch { out(errorLine(error)) }
        }
    }
    source.resume()
    return source
}
