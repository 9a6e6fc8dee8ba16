import Foundation
import SwiftPJSUA

/// What the system's call UI is told by the ``CallRouter``: the platform-neutral shape of
/// CallKit's `CXProvider`.
///
/// On iOS the CallKit adapter implements it over a `CXProvider`; tests implement it by
/// recording every call. Methods other than ``reportNewIncomingCall(_:update:)`` must return
/// quickly and must not call back into the router synchronously.
public protocol CallProvider: Sendable {
    /// Shows a new incoming call. Called once per logical call.
    /// (CallKit: `reportNewIncomingCall(with:update:completion:)`.)
    /// - Parameters:
    ///   - call: the call's UUID (see ``CallIdentity``).
    ///   - update: who is calling and with what media.
    /// - Throws: when the system refuses the call (for example Do Not Disturb or a blocked
    ///   caller); the router then declines the SIP call.
    func reportNewIncomingCall(_ call: UUID, update: CallUpdate) async throws

    /// Updates a call already shown, when a later arrival (the INVITE after the push) knows more.
    /// (CallKit: `reportCall(with:updated:)`.)
    func reportCallUpdated(_ call: UUID, update: CallUpdate)

    /// An outgoing call started connecting: the far end sent a provisional response.
    /// (CallKit: `reportOutgoingCall(with:startedConnectingAt:)`.)
    func reportOutgoingCallStartedConnecting(_ call: UUID)

    /// An outgoing call is established (CONFIRMED).
    /// (CallKit: `reportOutgoingCall(with:connectedAt:)`.)
    func reportOutgoingCallConnected(_ call: UUID)

    /// A call ended for a reason other than the user's own end action.
    /// (CallKit: `reportCall(with:endedAt:reason:)`.)
    func reportCallEnded(_ call: UUID, reason: CallEndReason)

    /// A user action succeeded. (CallKit: `CXAction.fulfill()`.)
    /// - Parameter action: ``CallAction/id``.
    func fulfill(_ action: UUID)

    /// A user action failed. (CallKit: `CXAction.fail()`.)
    /// - Parameters:
    ///   - action: ``CallAction/id``.
    ///   - error: why, for logs; CallKit does not take a reason.
    func fail(_ action: UUID, error: CallActionError)

    /// A call already shown started reconnecting (`CallReconnection`): the
    /// engine re-INVITEs it after a network change or a lost connection. The call keeps its
    /// UUID; nothing is ended or reported anew. CallKit has no reconnecting state, so the
    /// CallKit adapter reports nothing: this is for the app's own UI ("Reconnecting…").
    /// Defaults to doing nothing.
    func reportCallReconnecting(_ call: UUID)

    /// A call reported reconnecting is reconnected. Defaults to doing nothing.
    func reportCallReconnected(_ call: UUID)

    /// The engine gave up reconnecting a call reported reconnecting; the call stays up with
    /// the media it had. Defaults to doing nothing.
    func reportCallReconnectionFailed(_ call: UUID)
}

extension CallProvider {
    /// Does nothing: a provider that shows no reconnecting state need not implement it.
    public func reportCallReconnecting(_ call: UUID) {}

    /// Does nothing: a provider that shows no reconnecting state need not implement it.
    public func reportCallReconnected(_ call: UUID) {}

    /// Does nothing: a provider that shows no reconnecting state need not implement it.
    public func reportCallReconnectionFailed(_ call: UUID) {}
}

/// What the call UI shows about a call (CallKit: `CXCallUpdate`).
public struct CallUpdate: Sendable, Hashable {
    /// The far end's URI, for example `sip:alice@example.com` (CallKit: `remoteHandle`).
    public var remoteURI: String
    /// The far end's display-name, if it sent one (CallKit: `localizedCallerName`).
    public var displayName: String?
    /// Whether the call has or offers video.
    public var hasVideo: Bool

    /// Creates an update.
    /// - Parameters:
    ///   - remoteURI: the far end's URI.
    ///   - displayName: the far end's display-name, if any.
    ///   - hasVideo: whether video is offered.
    public init(remoteURI: String, displayName: String? = nil, hasVideo: Bool = false) {
        self.remoteURI = remoteURI
        self.displayName = displayName
        self.hasVideo = hasVideo
    }
}

/// Why a call ended, in CallKit's terms (`CXCallEndedReason`).
public enum CallEndReason: String, Sendable, Hashable, CaseIterable {
    /// The call failed (an error response, a transport failure, the engine shut down).
    case failed
    /// The far end hung up or declined.
    case remoteEnded
    /// The call was never answered: the caller cancelled (487) or the push's INVITE never came.
    case unanswered
    /// Another device of the user answered it.
    case answeredElsewhere
    /// Another device of the user declined it.
    case declinedElsewhere

    /// The reason for a call that ended with a SIP status the user did not cause.
    ///
    /// 487 (Request Terminated) → ``unanswered``; 486, 600, 603 → ``remoteEnded`` for a call
    /// we placed, ``declinedElsewhere`` for one we received; other 300–699 → ``failed``;
    /// 100–299 (a BYE after the call was established) → ``remoteEnded``; 0 (no response at
    /// all, or the engine shut down) → ``failed``.
    /// - Parameters:
    ///   - sipStatus: the INVITE session's last SIP status (100–699), or 0.
    ///   - isOutgoing: whether we placed the call.
    public init(sipStatus: Int, isOutgoing: Bool) {
        switch sipStatus {
        case 487: self = .unanswered
        case 486, 600, 603: self = isOutgoing ? .remoteEnded : .declinedElsewhere
        case 100...299: self = .remoteEnded
        default: self = .failed
        }
    }

    /// Like ``init(sipStatus:isOutgoing:)``, except that a call the engine ended because its
    /// peer vanished (the disconnected event's reason is `PJSUA.mediaTimeoutReason` or
    /// `PJSUA.transportLostReason`, whatever its last status) is ``failed``.
    public init(sipStatus: Int, reason: String, isOutgoing: Bool) {
        if reason == PJSUA.mediaTimeoutReason || reason == PJSUA.transportLostReason {
            self = .failed
        } else {
            self.init(sipStatus: sipStatus, isOutgoing: isOutgoing)
        }
    }
}

/// A user action on a call, as the call UI hands it over (CallKit: a `CXCallAction`).
public struct CallAction: Sendable, Hashable, Identifiable {
    /// What the user asked for.
    public enum Kind: Sendable, Hashable {
        /// Place a call to `uri` (`CXStartCallAction` with a SIP URI). `account` `nil` uses
        /// the first bound account.
        case start(uri: String, account: Account?, hasVideo: Bool)
        /// Place a call to a handle from the call UI, Contacts or Siri (`CXStartCallAction`'s
        /// `handle`), mapped to a URI by the router's ``HandleMapping``. `account` `nil` uses
        /// the first bound account.
        case dial(CallHandle, account: Account?, hasVideo: Bool)
        /// Answer (`CXAnswerCallAction`).
        case answer
        /// End or decline (`CXEndCallAction`).
        case end
        /// Put on hold (`true`) or resume (`false`) (`CXSetHeldCallAction`).
        case hold(Bool)
        /// Mute (`true`) or unmute (`false`) the microphone (`CXSetMutedCallAction`).
        case mute(Bool)
        /// Send DTMF digits, `0-9*#A-D` (`CXPlayDTMFCallAction`), as RFC 4733 events.
        case playDTMF(String)
        /// Join the call's audio with another call's (a local conference), or with `nil`
        /// leave the group (`CXSetGroupCallAction`).
        case group(with: UUID?)
    }

    /// The action's identity, used to fulfil or fail it (CallKit: `CXAction.uuid`).
    public var id: UUID
    /// The call it acts on (CallKit: `callUUID`).
    public var callUUID: UUID
    /// What to do.
    public var kind: Kind

    /// Creates an action.
    /// - Parameters:
    ///   - id: the action's identity; a new UUID by default.
    ///   - callUUID: the call's UUID.
    ///   - kind: what to do.
    public init(id: UUID = UUID(), callUUID: UUID, kind: Kind) {
        self.id = id
        self.callUUID = callUUID
        self.kind = kind
    }
}

/// Why the router failed a user action.
public enum CallActionError: LocalizedError, Sendable, Hashable, CustomStringConvertible {
    /// No call with that UUID is known (it ended, expired or never existed).
    case unknownCall(UUID)
    /// The call ended before the action could complete.
    case callEnded
    /// The action does not apply in the call's state (for example answering an outgoing call).
    case invalidState
    /// No account is bound to place the call from.
    case noAccount
    /// The engine does not offer the operation yet.
    case unsupported
    /// The engine refused; the text is the engine's error.
    case engine(String)
    /// The start action's handle maps to no URI (see ``HandleMapping``); the value is the handle's.
    case invalidHandle(String)

    /// What went wrong, in one line.
    public var description: String {
        switch self {
        case .unknownCall(let uuid): "no call with UUID \(uuid)"
        case .callEnded: "the call ended before the action completed"
        case .invalidState: "the action does not apply in the call's state"
        case .noAccount: "no account is bound to place the call from"
        case .unsupported: "the engine does not offer this action"
        case .engine(let text): "the engine refused: \(text)"
        case .invalidHandle(let value): "no URI to call for the handle \(value)"
        }
    }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }
}

/// A ``CallProvider`` that is also where the user's call actions come from (CallKit's
/// provider delegate is both).
///
/// ``CallRouter/init(engine:provider:clock:pushTimeToLive:callUUIDHeader:pushParser:handleMapping:)``
/// calls ``deliverActions(to:)`` when its provider is one, so router and provider are wired
/// in one step.
public protocol CallActionSource: CallProvider {
    /// Starts handing user actions (``CallRouter/perform(_:)``) and audio-session signals to
    /// `router`, in the order they come. Called once, from the router's initializer, which is
    /// synchronous: start a task here, do not await. A second call must do nothing.
    /// - Parameter router: the router whose provider this is.
    func deliverActions(to router: CallRouter)
}
