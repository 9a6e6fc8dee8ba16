import Foundation
import SwiftPJSUA

/// Joins the report PushKit forces to be made synchronously with the router's later report of
/// the same call, so the system is told of each call once.
///
/// The PushKit adapter reports a call before its delegate method returns
/// (``reportStarted(_:)``, then ``reportFinished(_:error:)`` from the system's completion).
/// When the router then reports the same UUID, ``join(_:)`` waits for that first report's
/// outcome instead of reporting again. Platform-neutral, so it is tested on Linux; the CallKit
/// adapter is its only user.
final class IncomingCallReports: Sendable {
    typealias Waiter = @Sendable ((any Error)?) -> Void

    private enum Report {
        case inFlight([Waiter])
        case finished((any Error)?)
    }

    private let reports = Protected<[UUID: Report]>([:])

    /// A report for `call` was just handed to the system.
    func reportStarted(_ call: UUID) {
        reports.withLock { $0[call] = .inFlight([]) }
    }

    /// The system answered the report for `call`: `nil` when it shows the call, else why not.
    func reportFinished(_ call: UUID, error: (any Error)?) {
        let waiters = reports.withLock { reports -> [Waiter] in
            defer { reports[call] = .finished(error) }
            if case .inFlight(let waiters) = reports[call] { return waiters }
            return []
        }
        for waiter in waiters { waiter(error) }
    }

    /// Waits for the outcome of an earlier report of `call`, if there was one, and forgets it.
    /// - Returns: `true` when an earlier report existed and the system shows the call;
    ///   `false` when there was none and the caller must report the call itself.
    /// - Throws: the system's error when it refused the earlier report; `CancellationError`
    ///   when the call was forgotten while the report was in flight.
    func join(_ call: UUID) async throws -> Bool {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
            let resolved: Result<Bool, any Error>? = reports.withLock { reports in
                switch reports[call] {
                case nil:
                    return .success(false)
                case .finished(let error):
                    reports[call] = nil
                    if let error { return .failure(error) }
                    return .success(true)
                case .inFlight(let waiters):
                    let waiter: Waiter = { error in
                        if let error {
                            continuation.resume(throwing: error)
                        } else {
                            continuation.resume(returning: true)
                        }
                    }
                    reports[call] = .inFlight(waiters + [waiter])
                    return nil
                }
            }
            if let resolved { continuation.resume(with: resolved) }
        }
    }

    /// Forgets `call` (it ended); a ``join(_:)`` still waiting throws `CancellationError`.
    func forget(_ call: UUID) {
        let waiters = reports.withLock { reports -> [Waiter] in
            defer { reports[call] = nil }
            if case .inFlight(let waiters) = reports[call] { return waiters }
            return []
        }
        for waiter in waiters { waiter(CancellationError()) }
    }
}
