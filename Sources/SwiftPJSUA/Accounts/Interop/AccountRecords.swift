import CPJSUAShim

/// What the engine keeps about each account: the configuration it was added with, whether
/// the app wants it registered, the retry of registrations whose authentication was
/// rejected (401, 403, 407), and the RFC 5626 keep-alive loop on its registration flow.
///
/// pjsua retries a failed registration by itself only after temporary failures (timeouts,
/// 5xx, 6xx). A rejected password may be fixed on the server, so the engine retries those
/// too, at the account's retry interval and never sooner: one REGISTER attempt (and one
/// failed registration event) per interval, not a tight loop.
final class AccountRecords: Sendable {
    private struct Policy {
        var account: Account
        var configuration: AccountConfiguration
        /// The app wants the account registered (added with registration, or
        /// `setRegistration(renew: true)`), as opposed to unregistered or removed.
        var wanted: Bool
        /// How the last REGISTER ended.
        var lastOutcome: RegistrationOutcome?
        /// The keep-alive loop runs (one timer at a time).
        var keepAliveRunning = false
        /// The ping awaiting its pong: the flow it went out on and when (pjlib timestamp).
        var pendingPing: (flow: Int, sentAt: UInt64)?
        /// The registrar has answered a ping with a pong: it supports RFC 5626 keep-alive, so
        /// a ping without an answer means a dead flow. Until then an unanswered ping proves
        /// nothing (a registrar without RFC 5626 never answers) and shuts nothing down.
        var pongSeen = false
    }

    private let policies = Protected<[UInt64: Policy]>([:])

    /// Records the account's configuration and whether it should be registered.
    func configure(_ account: Account, configuration: AccountConfiguration, wantsRegistration: Bool) {
        policies.withLock {
            let previous = $0[account.generation]
            var policy = Policy(
                account: account, configuration: configuration, wanted: wantsRegistration,
                lastOutcome: previous?.lastOutcome)
            policy.keepAliveRunning = previous?.keepAliveRunning ?? false
            policy.pendingPing = previous?.pendingPing
            // Another registrar has still to show that it answers pings.
            policy.pongSeen = previous?.configuration.registrar == configuration.registrar && previous?.pongSeen == true
            $0[account.generation] = policy
        }
    }

    /// Records how a REGISTER of the account ended (from the registration callback).
    func record(_ outcome: RegistrationOutcome, of account: Account) {
        policies.withLock { $0[account.generation]?.lastOutcome = outcome }
    }

    func lastOutcome(of account: Account) -> RegistrationOutcome? {
        policies.withLock { $0[account.generation]?.lastOutcome }
    }

    func configuration(of account: Account) -> AccountConfiguration? {
        policies.withLock { $0[account.generation]?.configuration }
    }

    /// Records whether the app wants the account registered; stops pending retries when not.
    func setWantsRegistration(_ account: Account, _ wanted: Bool) {
        policies.withLock { $0[account.generation]?.wanted = wanted }
    }

    func remove(_ account: Account) {
        _ = policies.withLock { $0.removeValue(forKey: account.generation) }
    }

    /// Schedules one registration attempt after the account's retry interval. Runs inside
    /// pjsua's registration callback; the timer fires on a pjsua worker thread and hands the
    /// attempt to the engine thread.
    func scheduleAfterAuthenticationFailure(_ account: Account) {
        guard let policy = policies.withLock({ $0[account.generation] }), policy.wanted,
            policy.configuration.retryInterval > .zero
        else { return }
        let token = UnsafeMutableRawPointer(bitPattern: UInt(account.generation))
        _ = cpj_schedule_timer(
            { token in authenticationRetryFired(UInt64(UInt(bitPattern: token))) },
            token, UInt32(clamping: policy.configuration.retryInterval.milliseconds))
    }

    /// Schedules one registration attempt after the account's retry interval when the
    /// REGISTER of a network change failed: pjsua retries no REGISTER that a network change
    /// sent (`ip_change_op` is `PJSUA_IP_CHANGE_OP_ACC_UPDATE_CONTACT` when it fails), so
    /// without this an account whose registrar was unreachable during the change would stay
    /// unregistered for good.
    func scheduleAfterFailedNetworkChange(_ account: Account) {
        scheduleAfterAuthenticationFailure(account)
    }

    /// The account to register again now, if it is still wanted.
    func accountToRetry(generation: UInt64) -> Account? {
        policies.withLock { policies in
            guard let policy = policies[generation], policy.wanted else { return nil }
            return policy.account
        }
    }
}

// MARK: Flow keep-alive (RFC 5626 §4.4.1)

extension AccountRecords {
    /// Starts the account's keep-alive loop if its configuration asks for one and it is not
    /// running yet. Runs inside pjsua's registration callback, after a successful REGISTER.
    func startFlowKeepAlive(_ account: Account) {
        let start = policies.withLock { policies -> Duration? in
            guard var policy = policies[account.generation], policy.wanted, !policy.keepAliveRunning,
                policy.configuration.flowKeepAliveInterval > .zero
            else { return nil }
            policy.keepAliveRunning = true
            policy.pendingPing = nil
            policies[account.generation] = policy
            return Self.keepAliveInterval(policy.configuration)
        }
        if let start { Self.scheduleKeepAlive(account.generation, after: start) }
    }

    /// The interval clamped to 1 s ... 1 day.
    fileprivate static func keepAliveInterval(_ configuration: AccountConfiguration) -> Duration {
        min(max(configuration.flowKeepAliveInterval, .seconds(1)), .seconds(86_400))
    }

    /// How long a ping waits for its pong: 10 s (RFC 5626 §4.4.1), or the interval when shorter.
    fileprivate static func pongWait(_ interval: Duration) -> Duration { min(interval, .seconds(10)) }

    fileprivate static func scheduleKeepAlive(_ generation: UInt64, after delay: Duration) {
        let token = UnsafeMutableRawPointer(bitPattern: UInt(generation))
        _ = cpj_schedule_timer(
            { token in keepAliveFired(UInt64(UInt(bitPattern: token))) },
            token, UInt32(clamping: delay.milliseconds))
    }

    /// One step of the loop, on the engine thread: send a ping, or judge the last one. Once
    /// the registrar has answered a ping, a flow without a pong is shut down (in the shim)
    /// and the account registers again, which opens a new connection. Stops when the
    /// account is gone, unwanted, or no longer asks for keep-alive. Returns the delay to the
    /// next step, or `nil` to stop.
    fileprivate func keepAliveStep(generation: UInt64) -> Duration? {
        guard let policy = policies.withLock({ $0[generation] }) else { return nil }
        let interval = Self.keepAliveInterval(policy.configuration)
        guard policy.wanted, policy.configuration.flowKeepAliveInterval > .zero,
            let slot = Handles.liveSlot(policy.account)
        else {
            policies.withLock {
                $0[generation]?.keepAliveRunning = false
                $0[generation]?.pendingPing = nil
            }
            return nil
        }
        let wait = Self.pongWait(interval)
        if let ping = policy.pendingPing {
            let verdict = cpj_acc_flow_check(slot, ping.flow, ping.sentAt, policy.pongSeen ? 1 : 0)
            policies.withLock {
                $0[generation]?.pendingPing = nil
                if verdict == CPJ_FLOW_PONG { $0[generation]?.pongSeen = true }
            }
            if verdict == CPJ_FLOW_FAILED {
                _ = pjsua_acc_set_registration(slot, 1)
                return interval
            }
            return interval - wait
        }
        var sentAt: UInt64 = 0
        let flow = cpj_acc_flow_ping(slot, &sentAt)
        guard flow != 0 else { return interval }
        policies.withLock { $0[generation]?.pendingPing = (flow, sentAt) }
        return wait
    }
}

/// A keep-alive timer fired (on a pjsua worker thread): take the step on the engine thread
/// if the same engine still runs, and schedule the next one.
private func keepAliveFired(_ generation: UInt64) {
    guard let bridge = EngineBridge.active() else { return }
    bridge.executor.post {
        guard EngineBridge.active() === bridge else { return }
        if let next = bridge.accountRecords.keepAliveStep(generation: generation) {
            AccountRecords.scheduleKeepAlive(generation, after: next)
        }
    }
}

/// The retry timer fired (on a pjsua worker thread): register again on the engine thread if
/// the same engine still runs and the account still exists and is wanted registered.
private func authenticationRetryFired(_ generation: UInt64) {
    guard let bridge = EngineBridge.active() else { return }
    bridge.executor.post {
        guard EngineBridge.active() === bridge,
            let account = bridge.accountRecords.accountToRetry(generation: generation),
            let slot = Handles.liveSlot(account)
        else { return }
        _ = pjsua_acc_set_registration(slot, 1)
    }
}

/// One registration outcome handed from an event consumer to the actor that waits for it.
final class OutcomeBox: Sendable {
    private let stored = Protected<RegistrationOutcome?>(nil)
    func set(_ outcome: RegistrationOutcome) { stored.withLock { $0 = outcome } }
    var value: RegistrationOutcome? { stored.withLock { $0 } }
}
