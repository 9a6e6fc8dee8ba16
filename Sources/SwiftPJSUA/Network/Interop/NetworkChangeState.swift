/// What the engine and pjsua's callbacks share about network changes while the engine runs,
/// behind one lock (``EngineBridge/network``).
struct NetworkChangeState: Sendable {
    /// When pjsua was last asked to handle a network change and until when the engine waits
    /// for it to complete; `nil` when none is in progress.
    var inProgressUntil: ContinuousClock.Instant?
    /// How many network changes were started.
    var changeCount = 0
    /// The ``changeCount`` when each incoming call arrived, by call generation: a call that
    /// rang through a change answers with the account's current Contact.
    var incomingCallEpochs: [UInt64: Int] = [:]

    /// Starts a change at `now` unless one is in progress; it is in progress until pjsua
    /// reports it completed, or at most until `now + longest`.
    mutating func claim(at now: ContinuousClock.Instant, longest: Duration) -> Bool {
        if let inProgressUntil, inProgressUntil > now { return false }
        inProgressUntil = now + longest
        changeCount += 1
        return true
    }

    /// Records that `call` arrived after the changes started so far.
    mutating func noteArrival(of call: Call) {
        incomingCallEpochs[call.generation] = changeCount
    }

    /// Forgets `call`, which ended.
    mutating func forget(_ call: Call) {
        incomingCallEpochs[call.generation] = nil
    }

    /// Whether a network change started after the incoming `call` arrived; `false` for a
    /// call we placed.
    func changed(sinceArrivalOf call: Call) -> Bool {
        incomingCallEpochs[call.generation].map { $0 != changeCount } ?? false
    }
}
