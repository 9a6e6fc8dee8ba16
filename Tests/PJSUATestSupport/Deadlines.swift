import Foundation
import SwiftPJSUA

/// Runs `operation`, throwing ``TimedOut`` if it has not finished after `timeout`.
public func withDeadline<R: Sendable>(
    _ what: String, _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> R
) async throws -> R {
    try await withThrowingTaskGroup(of: R?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            // The deadline itself, raced against the operation.
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else {
            throw TimedOut(what: what, seen: [])
        }
        return result
    }
}

/// Collects a stream; `true` when it finished within `timeout`.
public func finishes(_ stream: AsyncStream<PJSUAEvent>, within timeout: Duration) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            for await _ in stream {}
            return true
        }
        group.addTask {
            // The deadline itself, raced against the stream's end.
            try? await Task.sleep(for: timeout)
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
}

/// Waits until `condition` holds, checking it every `interval`, for states that raise no
/// event (a peer's output file, a counter, a namespace's process list); events are waited
/// for on an ``EventLog`` instead.
/// - Throws: ``TimedOut`` (with `seen()` in its message) when `timeout` passes first.
public func waitUntil(
    _ what: String, timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(20),
    seen: () -> String = { "" }, _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw TimedOut(what: what, seen: [seen()]) }
        // The polling interval: nothing announces this state.
        try await Task.sleep(for: interval)
    }
}

/// One UDP transport on a free port of 127.0.0.1.
public let loopbackUDP = [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)]
/// No sound hardware: the default is the system's device, which a test machine lacks.
public let nullSound = MediaConfiguration(soundDevice: .null)
