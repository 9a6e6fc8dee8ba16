import Foundation
import SwiftPJSUA

/// Reads a VoIP push in a server's own payload shape: the push's dictionary
/// (`PKPushPayload.dictionaryPayload`) to the call it announces, or `nil` when the payload is
/// not a call push this parser knows.
///
/// Give one to ``CallRouter`` (`pushParser:`) for pushes from servers that do not send
/// ``PushPayload`` schema version 1 (Asterisk, FreeSWITCH, a Kamailio push gateway, Flexisip
/// each have their own keys). It runs synchronously on PushKit's queue, before the call is
/// reported to CallKit: keep it to dictionary look-ups.
public typealias IncomingCallPushParser = @Sendable ([AnyHashable: Any]) -> IncomingCallPush?

extension PushPayload {
    /// The default ``IncomingCallPushParser``: a schema-version-1 `call` push (see
    /// ``PushPayload``); `nil` for anything else, including a valid `reregister` push.
    public static let schemaV1Parser: IncomingCallPushParser = { dictionary in
        guard case .incomingCall(let push)? = try? PushPayload(dictionary: dictionary) else { return nil }
        return push
    }
}

/// What a VoIP push became, decided synchronously by ``CallRouter/receiveVoIPPush(_:)``:
/// the UUID and update to report to CallKit before PushKit's delegate method returns, and
/// what ``CallRouter/handleVoIPPush(_:)`` does with it afterwards.
public struct VoIPPushReceipt: Sendable, Hashable {
    /// What the payload held.
    public enum Content: Sendable, Hashable {
        /// A call push; its ``IncomingCallPush/serverUUID`` is ``VoIPPushReceipt/callUUID``.
        case call(IncomingCallPush)
        /// A schema-version-1 `reregister` push sent as a VoIP push (it should be a
        /// background notification): honoured behind a placeholder call ended at once.
        case reRegister(accountHint: String)
        /// Neither the router's parser nor schema version 1 reads it; the text says why, for
        /// logs. A placeholder call is reported and ended at once as failed.
        case unreadable(String)
    }

    /// The UUID to report to CallKit now: the call's, or a new one for a placeholder.
    public var callUUID: UUID
    /// What CallKit shows: the caller, or `unknown` for a placeholder.
    public var update: CallUpdate
    /// What the payload held.
    public var content: Content

    /// Creates a receipt (the router makes them; tests and custom adapters may too).
    /// - Parameters:
    ///   - callUUID: the UUID reported to CallKit.
    ///   - update: what is shown.
    ///   - content: what the payload held.
    public init(callUUID: UUID, update: CallUpdate, content: Content) {
        self.callUUID = callUUID
        self.update = update
        self.content = content
    }

    /// The remote URI a placeholder call shows.
    public static let placeholderURI = "unknown"
}
