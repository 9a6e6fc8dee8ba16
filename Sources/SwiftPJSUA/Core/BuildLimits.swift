/// The fixed limits of the pjproject build the engine runs on: its `config_site.h` values,
/// read through the C shim when the engine was compiled against that pjproject.
///
/// pjsua and pjsip size their tables with these at build time and never grow them, so
/// they bound what one engine holds at once whatever ``Configuration`` asks for. The
/// `scripts/provision.sh` builds hold 1024 calls; the pinned iOS xcframework holds 4 (its
/// `config_site.h` takes the iPhone settings of pjproject's `config_site_sample.h`).
/// Reaching one of them throws a ``PJSUAError`` (``PJSUAError/Code/tooMany``, or
/// ``PJSUAError/Code/messageTooLong`` for a SIP message), never a pjsua assertion.
/// <!-- snippet-setup:
/// let engine = PJSUA()
/// -->
/// ```swift
/// let limits = PJSUA.buildLimits
/// try await engine.start(Configuration(maxCalls: min(8, limits.calls)))
/// ```
public struct BuildLimits: Sendable, Hashable, CustomStringConvertible {
    /// Calls pjsua holds at once (`PJSUA_MAX_CALLS`); the upper bound of
    /// ``Configuration/maxCalls``.
    public var calls: Int
    /// Accounts the engine holds at once, local accounts included (`PJSUA_MAX_ACC`).
    /// ``PJSUA/addAccount(_:)`` throws ``PJSUAError/Code/tooMany`` beyond it.
    public var accounts: Int
    /// File players (WAV and playlists) open at once (`PJSUA_MAX_PLAYERS`).
    public var players: Int
    /// File recorders open at once (`PJSUA_MAX_RECORDERS`).
    public var recorders: Int
    /// Slots of pjsua's conference bridge (`PJSUA_MAX_CONF_PORTS`; 12 on the iOS build).
    /// The engine sizes its bridge to two slots per call plus 32, but never above this.
    /// The sound device, pjsua's ringback and ring tones, every call with audio, and each
    /// player, recorder, tone generator and call frame stream take one (the sound-device
    /// frame stream takes none). With the bridge full, adding a player, recorder, tones or a
    /// frame stream throws ``PJSUAError/Code/tooMany``, and answering a call throws a
    /// ``PJSUAError`` with ``PJSUAError/sipStatus`` 488 (pjsua cannot create its media) and
    /// ends it with 488.
    public var conferencePorts: Int
    /// SIP transactions alive at once (`PJSIP_MAX_TSX_COUNT`): every request in flight,
    /// sent or received, including REGISTER refreshes and the INVITE of each ringing call.
    public var transactions: Int
    /// SIP dialogs alive at once (`PJSIP_MAX_DIALOG_COUNT`): calls, subscriptions and
    /// transfers' NOTIFY dialogs.
    public var dialogs: Int
    /// The largest SIP message, in bytes, pjsip sends or accepts (`PJSIP_MAX_PKT_LEN`:
    /// pjsip's default 4000 in the provisioned builds, 16000 on the iOS build). A request
    /// the engine would send above it throws ``PJSUAError/Code/messageTooLong``.
    public var sipMessageBytes: Int

    /// `calls 1024, accounts 32, …` in declaration order.
    public var description: String {
        "calls \(calls), accounts \(accounts), players \(players), recorders \(recorders), "
            + "conference ports \(conferencePorts), transactions \(transactions), "
            + "dialogs \(dialogs), SIP message bytes \(sipMessageBytes)"
    }
}
