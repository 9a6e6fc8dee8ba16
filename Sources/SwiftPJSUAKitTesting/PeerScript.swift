import SwiftPJSUA

/// What the far end of a ``FakeCallEngine`` call does, and when: a list of steps, each at
/// a delay after the call began (the INVITE sent or received), on the fake's clock.
///
/// For a call the app places, the far end can ring, answer, reject, send DTMF and hang up;
/// for a call it receives (``FakeCallEngine/receiveCall(from:to:script:)``), it can send
/// DTMF once answered and hang up (a CANCEL before the answer, a BYE after). Steps that no
/// longer apply (the call has ended, or a ring after the answer) are skipped, as a real
/// peer's late messages would be.
public struct PeerScript: Sendable, Hashable {
    /// One thing the far end does.
    public enum Step: Sendable, Hashable {
        /// Sends `180 Ringing` (or `183`): the call becomes `CallState/early`.
        case ring(statusCode: Int)
        /// Sends `200 OK`: the call becomes `CallState/connecting`, its media active, then
        /// `CallState/confirmed`.
        case answer
        /// Sends a final error response (300–699): the call ends with that status.
        case reject(statusCode: Int)
        /// Ends the call: a BYE once answered, a CANCEL before.
        case hangUp
        /// Sends DTMF digits (RFC 4733); the app receives `PJSUAEvent/dtmf(_:)` events.
        case sendDTMF(String)
    }

    /// The steps and their delays from the start of the call, in order.
    public var steps: [(after: Duration, step: Step)] {
        get { timeline.map { ($0.after, $0.step) } }
        set { timeline = newValue.map { Timed(after: $0.after, step: $0.step) } }
    }

    private struct Timed: Sendable, Hashable {
        var after: Duration
        var step: Step
    }

    private var timeline: [Timed]

    /// A far end that does nothing: the call stays as it is until the app acts.
    public init() { timeline = [] }

    private init(_ timeline: [Timed]) { self.timeline = timeline }

    /// A far end that does nothing.
    public static var silent: PeerScript { PeerScript() }

    /// Adds a step at `delay` after the start of the call.
    /// - Parameters:
    ///   - delay: the time from the start of the call (not from the previous step).
    ///   - step: what the far end does.
    /// - Returns: the script with the step added.
    public func then(after delay: Duration, _ step: Step) -> PeerScript {
        PeerScript(timeline + [Timed(after: delay, step: step)])
    }

    /// Rings at `delay` (`180 Ringing`).
    /// - Parameter delay: the time from the start of the call.
    /// - Returns: the script with the step added.
    public func ring(after delay: Duration = .zero) -> PeerScript { then(after: delay, .ring(statusCode: 180)) }

    /// Answers at `delay`.
    /// - Parameter delay: the time from the start of the call.
    /// - Returns: the script with the step added.
    public func answer(after delay: Duration) -> PeerScript { then(after: delay, .answer) }

    /// Rejects with `statusCode` (300–699) at `delay`.
    /// - Parameters:
    ///   - statusCode: the final response, such as 486 Busy Here.
    ///   - delay: the time from the start of the call.
    /// - Returns: the script with the step added.
    public func reject(with statusCode: Int, after delay: Duration = .zero) -> PeerScript {
        then(after: delay, .reject(statusCode: statusCode))
    }

    /// Hangs up at `delay`.
    /// - Parameter delay: the time from the start of the call.
    /// - Returns: the script with the step added.
    public func hangUp(after delay: Duration) -> PeerScript { then(after: delay, .hangUp) }

    /// Sends DTMF digits at `delay`.
    /// - Parameters:
    ///   - digits: `0`–`9`, `*`, `#`, `A`–`D`.
    ///   - delay: the time from the start of the call.
    /// - Returns: the script with the step added.
    public func sendDTMF(_ digits: String, after delay: Duration) -> PeerScript {
        then(after: delay, .sendDTMF(digits))
    }
}
