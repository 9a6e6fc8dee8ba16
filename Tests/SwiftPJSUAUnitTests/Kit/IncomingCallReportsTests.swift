import Foundation
import KitTestSupport
import Testing

@testable import SwiftPJSUAKit

/// The joining logic the CallKit adapter relies on (PushKit's synchronous report, then the
/// router's report of the same call), tested here because the adapter only compiles on Apple.
@Suite("Joining PushKit's synchronous report")
struct IncomingCallReportsTests {
    struct Refused: Error, Equatable {}

    @Test("No earlier report: the router must report the call itself")
    func noEarlierReport() async throws {
        #expect(try await IncomingCallReports().join(UUID()) == false)
    }

    @Test("An earlier report that already succeeded is joined once")
    func finishedBeforeJoin() async throws {
        let reports = IncomingCallReports()
        let call = UUID()
        reports.reportStarted(call)
        reports.reportFinished(call, error: nil)
        #expect(try await reports.join(call))
        #expect(try await reports.join(call) == false)
    }

    @Test("A join waits for a report still in flight and gets its outcome")
    func joinWaitsForInFlight() async throws {
        let reports = IncomingCallReports()
        let call = UUID()
        reports.reportStarted(call)
        let joined = Task { try await reports.join(call) }
        let refused = UUID()
        reports.reportStarted(refused)
        let refusal = Task { try await reports.join(refused) }
        // Let the joins register before the system answers (they may also come after).
        await Task.yield()
        reports.reportFinished(call, error: nil)
        reports.reportFinished(refused, error: Refused())
        #expect(try await joined.value)
        await #expect(throws: Refused.self) { try await refusal.value }
    }

    @Test("Forgetting a call releases a waiting join")
    func forget() async throws {
        let reports = IncomingCallReports()
        let call = UUID()
        reports.reportStarted(call)
        let joined = Task { try await reports.join(call) }
        await Task.yield()
        reports.forget(call)
        let result = await joined.result
        // Either the join was waiting (cancelled) or came after the forget (no report).
        switch result {
        case .success(let joinedEarlier): #expect(!joinedEarlier)
        case .failure(let error): #expect(error is CancellationError)
        }
    }
}
