import SwiftPJSUA

/// One operation the app (or the `CallRouter`) asked an engine double for.
public enum EngineRecord: Sendable, Hashable, CustomStringConvertible {
    /// A call placed to the URI.
    case makeCall(String)
    /// An answer with the status code.
    case answer(Call, Int)
    /// A hang-up with the status code, if one was given.
    case hangup(Call, Int?)
    /// The sound device attached.
    case activateAudio
    /// The sound device detached.
    case deactivateAudio
    /// A fresh REGISTER for the account.
    case reRegister(Account)
    /// A REGISTER with new push parameters: the account and the new `pn-prid`.
    case reRegisterWithPush(Account, String)
    /// Hold (`true`) or resume (`false`).
    case hold(Call, Bool)
    /// Mute (`true`) or unmute (`false`).
    case mute(Call, Bool)
    /// DTMF digits sent.
    case dtmf(Call, String)
    /// Two calls' audio joined (`true`) or parted (`false`).
    case conference(Call, Call, Bool)

    /// The case and its values, for test failure messages.
    public var description: String {
        switch self {
        case .makeCall(let uri): "makeCall(\(uri))"
        case .answer(let call, let code): "answer(\(call), \(code))"
        case .hangup(let call, let code): "hangup(\(call), \(code.map(String.init) ?? "nil"))"
        case .activateAudio: "activateAudio"
        case .deactivateAudio: "deactivateAudio"
        case .reRegister(let account): "reRegister(\(account))"
        case .reRegisterWithPush(let account, let resourceID): "reRegister(\(account), pn-prid=\(resourceID))"
        case .hold(let call, let on): "hold(\(call), \(on))"
        case .mute(let call, let on): "mute(\(call), \(on))"
        case .dtmf(let call, let digits): "dtmf(\(call), \(digits))"
        case .conference(let a, let b, let on): "conference(\(a), \(b), \(on))"
        }
    }

    /// The operation this record is of, as ``FakeCallEngine/failNext(_:with:)`` names it.
    public var operation: FakeCallEngine.Operation {
        switch self {
        case .makeCall: .makeCall
        case .answer: .answer
        case .hangup: .hangup
        case .activateAudio, .deactivateAudio: .audioDevice
        case .reRegister, .reRegisterWithPush: .reRegister
        case .hold: .hold
        case .mute: .mute
        case .dtmf: .dtmf
        case .conference: .conference
        }
    }
}
