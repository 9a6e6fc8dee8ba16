/// How the engine moves its transports to a new network (`pjsua_ip_change_param`), for
/// ``PJSUA/handleNetworkChange(_:)``.
public struct NetworkChangeOptions: Sendable, Hashable {
    /// Re-create the SIP listeners (`restart_listener`), so that UDP and the TCP/TLS listeners
    /// are bound to the addresses the host has now. pjsua binds a restarted listener to the
    /// any-address (`0.0.0.0` or `::`) even when the transport was configured with a bind
    /// address. Default `true`.
    public var restartsListeners: Bool
    /// How long pjsua waits after closing a listener before it binds it again
    /// (`restart_lis_delay`, milliseconds). 0 ms to 10 s; default 10 ms.
    public var listenerRestartDelay: Duration
    /// Shut every TCP and TLS connection down (`shutdown_transport`), so that no request is
    /// sent on a connection whose local address is gone; the next request opens a new one.
    /// UDP is not affected (``restartsListeners`` covers it). Default `true`. pjproject 2.15
    /// and later (`shutdown_transport`); before, only each account's registration connection
    /// is shut down (``NetworkChangePolicy/shutsDownRegistrationTransport``).
    public var shutsDownReliableTransports: Bool
    /// How long ``PJSUA/handleNetworkChange(_:)`` waits for pjsua to report the change
    /// completed (every account re-registered or given up) before it returns what happened
    /// so far. More than 0 s, at most 5 minutes; default 40 s, above a REGISTER's
    /// transaction timeout (64 × T1 = 32 s).
    public var deadline: Duration

    /// Creates options; the defaults restart the listeners, shut reliable connections down
    /// and wait up to 40 s.
    public init(
        restartsListeners: Bool = true, listenerRestartDelay: Duration = .milliseconds(10),
        shutsDownReliableTransports: Bool = true, deadline: Duration = .seconds(40)
    ) {
        self.restartsListeners = restartsListeners
        self.listenerRestartDelay = listenerRestartDelay
        self.shutsDownReliableTransports = shutsDownReliableTransports
        self.deadline = deadline
    }
}

/// What a network change does to one account and its calls
/// (`pjsua_acc_config.ip_change_cfg`), set in ``AccountConfiguration/networkChange``.
///
/// Whatever the policy, pjsua ends outgoing calls that are not confirmed yet (CANCEL for an
/// early one) with 410 as the local reason: their INVITE went out from an address that is
/// gone and a provisional response cannot be re-targeted. Incoming calls that are still
/// ringing are left as they are.
public struct NetworkChangePolicy: Sendable, Hashable {
    /// What happens to the account's confirmed calls.
    public enum ConfirmedCalls: Sendable, Hashable {
        /// Send a re-INVITE with a new Contact, Via and SDP (a target refresh, RFC 3261
        /// §12.2, with new media transports): the call goes on from the new address. The
        /// default.
        case reinvite
        /// Send an UPDATE (RFC 3311) with the same changes when the peer's Allow lists it,
        /// and a re-INVITE otherwise. pjproject 2.13 and later (`reinv_use_update`); before,
        /// a re-INVITE.
        case update
        /// Leave them alone: no re-INVITE. Their media keeps the old address.
        case keep
        /// End them (and the account's early calls) with BYE or CANCEL.
        case end
    }

    /// What happens to the account's confirmed calls. Default ``ConfirmedCalls/reinvite``.
    public var confirmedCalls: ConfirmedCalls
    /// Shut the TCP or TLS connection the account registered over down, even when other
    /// accounts share it, before registering again (`shutdown_tp`). Default `true`.
    public var shutsDownRegistrationTransport: Bool

    /// Creates a policy: re-INVITE confirmed calls and renew the registration's connection.
    public init(confirmedCalls: ConfirmedCalls = .reinvite, shutsDownRegistrationTransport: Bool = true) {
        self.confirmedCalls = confirmedCalls
        self.shutsDownRegistrationTransport = shutsDownRegistrationTransport
    }
}

/// One step of a network change, as pjsua reports it (`on_ip_change_progress`), delivered as
/// ``PJSUAEvent/networkChange(_:)`` and collected in ``NetworkChangeReport``.
///
/// Which of the optional fields are set depends on ``step``.
public struct NetworkChangeProgress: Sendable, Hashable {
    /// The steps of `pjsua_handle_ip_change`, in the order they happen.
    public enum Step: Sendable, Hashable {
        /// Every TCP and TLS connection was shut down (reported by pjproject 2.17 and later).
        case reliableTransportsShutDown
        /// A listener was bound again; ``NetworkChangeProgress/transport`` names it.
        case listenerRestarted
        /// The connection an account registered over was shut down.
        case accountTransportShutDown
        /// An account's Contact was updated: by a REGISTER when
        /// ``NetworkChangeProgress/isRegistration`` (its final status in
        /// ``NetworkChangeProgress/statusCode``), or for an account without registration.
        case contactUpdated
        /// A call was ended; ``NetworkChangeProgress/call`` names it.
        case callEnded
        /// A re-INVITE or UPDATE was sent for a call (a target refresh).
        case targetRefreshSent
        /// Every account is done. The last step of a change.
        case completed
    }

    /// What happened.
    public var step: Step
    /// The account concerned, for the account steps.
    public var account: Account?
    /// The call concerned, for ``Step/callEnded`` and ``Step/targetRefreshSent``.
    public var call: Call?
    /// The transport concerned, for ``Step/listenerRestarted``.
    public var transport: Transport?
    /// For ``Step/contactUpdated``: whether a REGISTER carried the update.
    public var isRegistration: Bool
    /// For ``Step/contactUpdated`` by REGISTER: the SIP status of its final response.
    public var statusCode: Int?
    /// Why the step failed, `nil` when it succeeded.
    public var error: PJSUAError?

    /// Creates a progress value.
    public init(
        step: Step, account: Account? = nil, call: Call? = nil, transport: Transport? = nil,
        isRegistration: Bool = false, statusCode: Int? = nil, error: PJSUAError? = nil
    ) {
        self.step = step
        self.account = account
        self.call = call
        self.transport = transport
        self.isRegistration = isRegistration
        self.statusCode = statusCode
        self.error = error
    }
}

/// What ``PJSUA/handleNetworkChange(_:)`` saw: every step, in order.
public struct NetworkChangeReport: Sendable, Hashable {
    /// The steps pjsua reported for this change, the last one ``NetworkChangeProgress/Step/completed``
    /// when ``isComplete``.
    public var steps: [NetworkChangeProgress]
    /// Whether pjsua reported the change completed before the deadline.
    public var isComplete: Bool

    /// Creates a report.
    public init(steps: [NetworkChangeProgress], isComplete: Bool) {
        self.steps = steps
        self.isComplete = isComplete
    }

    /// The steps that failed.
    public var failures: [NetworkChangeProgress] { steps.filter { $0.error != nil } }
}
