import CPJSIP


/// What the engine keeps about each account: the configuration it was added with, whether
/// the app wants it registered, and the retry of registrations whose authentication was
/// rejected (401, 403, 407).
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
    }

    private let policies = Protected<[UInt64: Policy]>([:])

    /// Records the account's configuration and whether it should be registered.
    func configure(_ account: Account, configuration: AccountConfiguration, wantsRegistration: Bool) {
        policies.withLock {
            let last = $0[account.generation]?.lastOutcome
            $0[account.generation] = Policy(
                account: account, configuration: configuration, wanted: wantsRegistration, lastOutcome: last)
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
              policy.configuration.retryInterval > .zero else { return }
        let token = UnsafeMutableRawPointer(bitPattern: UInt(account.generation))
        _ = cpj_schedule_timer(
            { token in authenticationRetryFired(UInt64(UInt(bitPattern: token))) },
            token, UInt32(clamping: policy.configuration.retryInterval.milliseconds))
    }

    /// The account to register again now, if it is still wanted.
    fileprivate func accountToRetry(generation: UInt64) -> Account? {
        policies.withLock { policies in
            guard let policy = policies[generation], policy.wanted else { return nil }
            return policy.account
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
              let slot = Handles.liveSlot(account) else { return }
        _ = pjsua_acc_set_registration(slot, 1)
    }
}

/// One registration outcome handed from an event consumer to the actor that waits for it.
final class OutcomeBox: Sendable {
    private let stored = Protected<RegistrationOutcome?>(nil)
    func set(_ outcome: RegistrationOutcome) { stored.withLock { $0 = outcome } }
    var value: RegistrationOutcome? { stored.withLock { $0 } }
}
