/// Which out-of-dialog requests an account accepts: the checks the engine makes on every
/// INVITE, SUBSCRIBE, REFER, MESSAGE and OPTIONS without a To tag that pjsua would hand to
/// the account (`pjsua_acc_find_for_incoming`), before pjsua or the app sees it.
///
/// A request that fails a check is answered statelessly and never reaches the app (no
/// ``PJSUAEvent/incomingCall(_:)``, no transaction); it is counted in
/// ``PJSUA/admissionCounters()``:
/// - not from a server (``onlyFromServers``): `403 Forbidden`, whatever the Request-URI
///   says, so a scanner cannot tell the account's user from any other;
/// - from a server, but for another user (``requiresContactUser``): `404 Not Found`
///   (RFC 3261 §21.4.5: no such user here).
///
/// Requests inside a dialog (a re-INVITE, BYE, NOTIFY of a subscription) are never
/// screened: the dialog was admitted when it started. A retransmission of a rejected UDP
/// request is answered and counted again.
///
/// The default, ``AccountConfiguration/whoMayCall`` left `nil`, is ``serversOnly`` for an
/// account with a registrar and ``anyone`` for one without (and for
/// ``PJSUA/addLocalAccount(on:isDefault:mediaInactivityTimeout:transportLossPolicy:)``).
/// See <doc:ExposedToTheInternet>.
public struct WhoMayCall: Sendable, Hashable, CustomStringConvertible {
    /// Accept only requests whose source IP is an address of the registrar's host or of an
    /// outbound proxy's host (``AccountConfiguration/registrar``,
    /// ``AccountConfiguration/outboundProxies``), or the source of one of the last four
    /// responses to the account's REGISTER. Host names are resolved (`getaddrinfo`, A and
    /// AAAA, on a thread of its own) when the account is added or modified and again after
    /// every registration outcome, so a changed DNS record is followed at the next refresh;
    /// a lookup that finds nothing keeps the addresses known before. The port is not
    /// compared. SRV targets are not resolved separately: the REGISTER responses' sources
    /// cover the server pjsip's resolver chose.
    public var onlyFromServers: Bool
    /// Accept only requests whose Request-URI user part is the account's Contact user (the
    /// user part of ``AccountConfiguration/identity``, which pjsua puts in the Contact it
    /// registers; compared without regard to case, as pjsua matches accounts). A registrar
    /// forwards a call to the registered Contact, so its Request-URI carries that user.
    /// pjsua adds no per-registration parameter of its own to the Contact URI that could be
    /// checked besides (`;ob` is the same for everyone), so only the user part is compared.
    public var requiresContactUser: Bool

    /// Creates a policy with the checks given.
    /// - Parameters:
    ///   - onlyFromServers: accept only the registrar's and proxies' addresses.
    ///   - requiresContactUser: accept only the account's own Contact user.
    public init(onlyFromServers: Bool, requiresContactUser: Bool) {
        self.onlyFromServers = onlyFromServers
        self.requiresContactUser = requiresContactUser
    }

    /// No checks: anyone may call (the default for an account without a registrar).
    public static let anyone = WhoMayCall(onlyFromServers: false, requiresContactUser: false)

    /// Both checks: only the registrar and proxies, and only for the account's Contact user
    /// (the default for an account with a registrar).
    public static let serversOnly = WhoMayCall(onlyFromServers: true, requiresContactUser: true)

    /// Whether the policy checks anything.
    public var isOpen: Bool { !onlyFromServers && !requiresContactUser }

    /// The checks, e.g. `WhoMayCall(onlyFromServers: true, requiresContactUser: true)`.
    public var description: String {
        "WhoMayCall(onlyFromServers: \(onlyFromServers), requiresContactUser: \(requiresContactUser))"
    }
}

/// How many out-of-dialog requests the engine lets one source start, and how many incoming
/// calls may ring at once: ``Configuration/limits``. Checked by the engine's admission module
/// before pjsua or the app sees a request (see <doc:ExposedToTheInternet>); what goes over a
/// limit is answered statelessly, never reaches the app and is counted in
/// ``PJSUA/admissionCounters()``. ``PJSUA/start(_:)`` throws
/// ``PJSUAUsageError/invalidConfiguration(_:)`` for values outside the ranges below.
public struct IncomingLimits: Sendable, Hashable {
    /// A token bucket per source IP address (the port is not part of the source): each
    /// INVITE, SUBSCRIBE, REFER and MESSAGE without a To tag takes a token, OPTIONS none;
    /// tokens come back at ``perSecond`` up to ``burst``. A request that finds the bucket
    /// empty is answered `503 Service Unavailable` with `Retry-After:`
    /// ``IncomingLimits/retryAfter``, over UDP too: a dropped UDP INVITE would come back as
    /// retransmissions (timer A), while the 503 tells an honest client to wait, and the
    /// answer is no larger than the request, so it amplifies nothing.
    /// 1024 sources are tracked at once; a new one takes the place of the quietest.
    public struct RequestRate: Sendable, Hashable {
        /// Tokens added per second, 1 to 10 000.
        public var perSecond: Int
        /// The bucket's size, the most requests one source may send at once, ``perSecond``
        /// to 100 000.
        public var burst: Int

        /// Creates a rate.
        /// - Parameters:
        ///   - perSecond: tokens per second, 1 to 10 000.
        ///   - burst: the bucket's size, at least `perSecond`, at most 100 000.
        public init(perSecond: Int, burst: Int) {
            self.perSecond = perSecond
            self.burst = burst
        }

        /// 10 requests per second, bursts of 20: a phone's busiest honest peer (its proxy,
        /// relaying a call, a transfer's REFER and a few MESSAGEs and SUBSCRIBEs) stays far
        /// below it, while a scanner or a looping peer is cut off within two seconds. An app
        /// that serves many users behind one proxy raises it.
        public static let `default` = RequestRate(perSecond: 10, burst: 20)
    }

    /// The per-source rate limit; `nil` for none. Defaults to ``RequestRate/default``.
    public var requestRate: RequestRate?
    /// The most incoming calls ringing at once (answered by neither side yet: pjsua's
    /// `PJSIP_INV_STATE_INCOMING` and `EARLY`), at least 1; `nil` for no cap but
    /// ``Configuration/maxCalls`` (a cap at or above it changes nothing either). One INVITE
    /// more is answered `486 Busy Here` with `Retry-After`, not 503: the request is fine and
    /// the user is busy, and a proxy treats
    /// 503 from a UA as a failed server (RFC 3263 §4.3) rather than routing the call to
    /// voicemail. Defaults to ``defaultMaxRingingCalls``.
    public var maxRingingCalls: Int?
    /// The `Retry-After` of the 503 and 486 answers, whole seconds from 1 s to 1 h; defaults
    /// to 5 s.
    public var retryAfter: Duration

    /// The default of ``maxRingingCalls``: 4, enough for call waiting and a few lines of a
    /// hunt group, few enough that a flood cannot fill every call slot.
    public static let defaultMaxRingingCalls = 4

    /// Creates limits; every parameter has a documented default.
    /// - Parameters:
    ///   - requestRate: the per-source rate, or `nil` for none.
    ///   - maxRingingCalls: the most calls ringing at once, or `nil` for no cap.
    ///   - retryAfter: the `Retry-After` of 503 and 486 answers.
    public init(
        requestRate: RequestRate? = .default, maxRingingCalls: Int? = IncomingLimits.defaultMaxRingingCalls,
        retryAfter: Duration = .seconds(5)
    ) {
        self.requestRate = requestRate
        self.maxRingingCalls = maxRingingCalls
        self.retryAfter = retryAfter
    }

    /// No rate limit and no ringing cap (the engine behaves as before these limits).
    public static let unlimited = IncomingLimits(requestRate: nil, maxRingingCalls: nil)
}

/// How many out-of-dialog requests the engine's admission module has answered itself since
/// ``PJSUA/start(_:)``, by reason: a rising ``notFromServer`` or ``unknownUser`` is a scan.
/// Engine-wide, not per account.
public struct AdmissionCounters: Sendable, Hashable {
    /// Answered `403`: the source was not the account's registrar or proxy
    /// (``WhoMayCall/onlyFromServers``).
    public var notFromServer: Int
    /// Answered `404`: the Request-URI user was not the account's Contact user
    /// (``WhoMayCall/requiresContactUser``).
    public var unknownUser: Int
    /// Answered `503` with `Retry-After`: the source went over
    /// ``IncomingLimits/requestRate``.
    public var rateLimited: Int
    /// INVITEs answered `486` with `Retry-After`: ``IncomingLimits/maxRingingCalls`` calls
    /// were ringing.
    public var ringingCapReached: Int

    /// Creates counters with every field given, for tests and previews.
    /// - Parameters:
    ///   - notFromServer: 403 answers.
    ///   - unknownUser: 404 answers.
    ///   - rateLimited: 503 answers.
    ///   - ringingCapReached: 486 answers.
    public init(notFromServer: Int = 0, unknownUser: Int = 0, rateLimited: Int = 0, ringingCapReached: Int = 0) {
        self.notFromServer = notFromServer
        self.unknownUser = unknownUser
        self.rateLimited = rateLimited
        self.ringingCapReached = ringingCapReached
    }

    /// Every request the module rejected.
    public var total: Int { notFromServer + unknownUser + rateLimited + ringingCapReached }
}

extension IncomingLimits {
    /// The pass ``PJSUA/start(_:)`` makes.
    func validate() throws(PJSUAUsageError) {
        if let rate = requestRate {
            guard (1...10_000).contains(rate.perSecond) else {
                throw .invalidConfiguration("limits.requestRate.perSecond must be 1...10000, got \(rate.perSecond)")
            }
            guard rate.burst >= rate.perSecond, rate.burst <= 100_000 else {
                throw .invalidConfiguration(
                    "limits.requestRate.burst must be perSecond (\(rate.perSecond))...100000, got \(rate.burst)")
            }
        }
        if let maxRingingCalls, maxRingingCalls < 1 {
            throw .invalidConfiguration("limits.maxRingingCalls must be at least 1, got \(maxRingingCalls)")
        }
        guard retryAfter >= .seconds(1), retryAfter <= .seconds(3600), retryAfter.components.attoseconds == 0 else {
            throw .invalidConfiguration("limits.retryAfter must be whole seconds, 1 s...1 h, got \(retryAfter)")
        }
    }
}

extension AccountConfiguration {
    /// The policy in force: ``whoMayCall``, or the default for the account (``WhoMayCall/serversOnly``
    /// with a registrar, ``WhoMayCall/anyone`` without).
    public var effectiveWhoMayCall: WhoMayCall {
        whoMayCall ?? (registrar == nil ? .anyone : .serversOnly)
    }
}
