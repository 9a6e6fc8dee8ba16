import Foundation
import SwiftPJSUA

/// A VoIP push, parsed from the JSON schema version 1 that a SIP server sends.
///
/// The schema (one JSON object; keys not listed are ignored, so APNs' `aps` may sit beside them):
///
/// - `version` (integer, required): the schema version, `1`. Other versions are rejected.
/// - `type` (string, required): `"call"` for an incoming call, `"reregister"` for a silent
///   re-registration.
/// - `uuid` (string, optional; `call` only): the call's UUID chosen by the server. Put the
///   same UUID in the INVITE's `X-Call-UUID` header to pair them without a Call-ID.
/// - `callID` (string, optional; `call` only): the SIP Call-ID of the INVITE that follows,
///   exactly as it will arrive.
/// - `caller` (object, required for `call`): `uri` (string, `sip:`, `sips:` or `tel:`,
///   required) and `name` (string, optional display-name).
/// - `video` (boolean, optional; `call` only): the call offers video; `false` when absent.
/// - `account` (string, required for `reregister`, optional for `call`): the account hint,
///   the string the app bound to an account with ``CallRouter/bind(_:pushHint:)``.
///
/// ```json
/// {"version": 1, "type": "call", "uuid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
///  "callID": "a84b4c76e66710@pc33.example.com",
///  "caller": {"uri": "sip:alice@example.com", "name": "Alice"}, "video": false,
///  "account": "bob@example.com"}
/// {"version": 1, "type": "reregister", "account": "bob@example.com"}
/// ```
public enum PushPayload: Sendable, Hashable {
    /// An incoming call is on its way (type `call`).
    case incomingCall(IncomingCallPush)
    /// Register the account again now (type `reregister`), for example after the server
    /// lost its binding. The value is the account hint.
    case reRegister(accountHint: String)

    /// The schema version this library reads and writes.
    public static let version = 1

    /// Parses a payload from JSON.
    /// - Parameter json: the push's JSON, UTF-8.
    /// - Throws: ``PushPayloadError`` naming the first problem: not JSON, not an object, a
    ///   missing or ill-typed field, an unsupported version or an unknown type.
    public init(json: Data) throws(PushPayloadError) {
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: json)
        } catch let error as DecodingError {
            throw PushPayloadError(error)
        } catch {
            throw .notJSON
        }
        self = try wire.validated()
    }

    /// Parses a payload from the dictionary PushKit hands over
    /// (`PKPushPayload.dictionaryPayload`).
    /// - Parameter dictionary: the payload as property-list values.
    /// - Throws: ``PushPayloadError/notJSON`` when the dictionary holds values JSON cannot
    ///   carry; otherwise as ``init(json:)``.
    public init(dictionary: [AnyHashable: Any]) throws(PushPayloadError) {
        var object: [String: Any] = [:]
        for (key, value) in dictionary {
            guard let key = key.base as? String else { throw .notAnObject }
            object[key] = value
        }
        guard JSONSerialization.isValidJSONObject(object),
            let data = try? JSONSerialization.data(withJSONObject: object)
        else { throw .notJSON }
        try self.init(json: data)
    }

    /// The payload as schema-version-1 JSON (keys sorted), for servers and tests.
    public var json: Data {
        var object: [String: Any] = ["version": Self.version]
        switch self {
        case .incomingCall(let push):
            object["type"] = "call"
            if let uuid = push.serverUUID { object["uuid"] = uuid.uuidString }
            if let callID = push.sipCallID { object["callID"] = callID }
            var caller: [String: Any] = ["uri": push.caller.uri]
            if let name = push.caller.displayName { caller["name"] = name }
            object["caller"] = caller
            object["video"] = push.hasVideo
            if let account = push.accountHint { object["account"] = account }
        case .reRegister(let account):
            object["type"] = "reregister"
            object["account"] = account
        }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }

    /// The wire form: every field optional, so that a missing one is reported by name.
    private struct Wire: Decodable {
        struct Caller: Decodable {
            var uri: String?
            var name: String?
        }

        var version: Int?
        var type: String?
        var uuid: String?
        var callID: String?
        var caller: Caller?
        var video: Bool?
        var account: String?

        func validated() throws(PushPayloadError) -> PushPayload {
            guard let version else { throw .missingField("version") }
            guard version == PushPayload.version else { throw .unsupportedVersion(version) }
            guard let type else { throw .missingField("type") }
            if let account, account.isEmpty || account.containsControlCharacter { throw .invalidField("account") }
            switch type {
            case "call":
                var serverUUID: UUID?
                if let uuid {
                    guard let parsed = UUID(uuidString: uuid) else { throw .invalidField("uuid") }
                    serverUUID = parsed
                }
                if let callID {
                    // RFC 3261 callid = word ["@" word]: no whitespace, no controls.
                    guard !callID.isEmpty,
                        !callID.unicodeScalars.contains(where: {
                            $0.properties.isWhitespace || $0.properties.generalCategory == .control
                        })
                    else { throw .invalidField("callID") }
                }
                guard let caller else { throw .missingField("caller") }
                guard let uri = caller.uri else { throw .missingField("caller.uri") }
                let scheme = uri.prefix { $0 != ":" }.lowercased()
                guard ["sip", "sips", "tel"].contains(scheme), uri.count > scheme.count + 1,
                    !uri.containsControlCharacter
                else { throw .invalidField("caller.uri") }
                if let name = caller.name, name.containsControlCharacter { throw .invalidField("caller.name") }
                return .incomingCall(
                    IncomingCallPush(
                        serverUUID: serverUUID, sipCallID: callID,
                        caller: SIPAddress(displayName: caller.name, uri: uri),
                        hasVideo: video ?? false, accountHint: account))
            case "reregister":
                guard let account else { throw .missingField("account") }
                return .reRegister(accountHint: account)
            default:
                throw .unknownType(type)
            }
        }
    }
}

/// The call a `call` push announces.
public struct IncomingCallPush: Sendable, Hashable {
    /// The UUID the server chose for the call, if any (see ``CallIdentity``).
    public var serverUUID: UUID?
    /// The SIP Call-ID of the INVITE to come, exactly as it will arrive; `nil` when the
    /// server does not know it (the call is then matched with the next INVITE for the account).
    public var sipCallID: String?
    /// The caller's URI and display-name.
    public var caller: SIPAddress
    /// Whether the call offers video.
    public var hasVideo: Bool
    /// Which account the call is for: a hint bound with ``CallRouter/bind(_:pushHint:)``;
    /// `nil` matches any account.
    public var accountHint: String?

    /// Creates the description of a pushed call.
    /// - Parameters:
    ///   - serverUUID: the server's UUID for the call, if any.
    ///   - sipCallID: the INVITE's Call-ID, if known.
    ///   - caller: the caller.
    ///   - hasVideo: whether video is offered.
    ///   - accountHint: the account hint, if any.
    public init(
        serverUUID: UUID? = nil, sipCallID: String? = nil, caller: SIPAddress, hasVideo: Bool = false,
        accountHint: String? = nil
    ) {
        self.serverUUID = serverUUID
        self.sipCallID = sipCallID
        self.caller = caller
        self.hasVideo = hasVideo
        self.accountHint = accountHint
    }
}

/// Why a push payload was rejected.
public enum PushPayloadError: LocalizedError, Sendable, Hashable, CustomStringConvertible {
    /// The data is not JSON (or, from a dictionary, holds values JSON cannot carry).
    case notJSON
    /// The JSON is not an object.
    case notAnObject
    /// A required field is absent; the value is its key path, such as `caller.uri`.
    case missingField(String)
    /// A field has the wrong JSON type or an invalid value; the value is its key path.
    case invalidField(String)
    /// The `version` is not one this library reads.
    case unsupportedVersion(Int)
    /// The `type` is not `call` or `reregister`.
    case unknownType(String)

    init(_ error: DecodingError) {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            self = context.codingPath.isEmpty ? .notAnObject : .invalidField(Self.path(context.codingPath))
        case .dataCorrupted(let context):
            self = context.codingPath.isEmpty ? .notJSON : .invalidField(Self.path(context.codingPath))
        case .keyNotFound(let key, let context):
            self = .missingField(Self.path(context.codingPath + [key]))
        @unknown default:
            self = .notJSON
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map(\.stringValue).joined(separator: ".")
    }

    /// A one-line description of the problem.
    public var description: String {
        switch self {
        case .notJSON: "push payload is not JSON"
        case .notAnObject: "push payload is not a JSON object"
        case .missingField(let key): "push payload lacks \(key)"
        case .invalidField(let key): "push payload field \(key) has the wrong type or value"
        case .unsupportedVersion(let version): "push payload version \(version) is not supported"
        case .unknownType(let type): "push payload type \(type) is unknown"
        }
    }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }
}

extension String {
    var containsControlCharacter: Bool {
        unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
