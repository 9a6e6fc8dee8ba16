import Foundation

/// An error reported by pjproject: a `pj_status_t` with the function that returned it.
///
/// The message is the `pj_strerror` text captured on the engine thread when the error
/// was thrown. When the status encodes a SIP response (pjsip maps final responses to
/// statuses), ``sipStatus`` holds that code (100–699).
///
/// Compare ``code`` with the named values to handle a specific failure:
/// <!-- snippet-setup:
/// let engine = PJSUA()
/// let account: Account = placeholder()
/// let uri = "sip:bob@example.com"
/// -->
/// ```swift
/// do { _ = try await engine.placeCall(to: uri, from: account) }
/// catch let error as PJSUAError where error.code == .tooMany { /* call limit */ }
/// ```
public struct PJSUAError: LocalizedError, Sendable, Hashable, CustomStringConvertible {
    /// A pjproject status code. Named values are read from the linked pjproject, so they
    /// stay right whatever the library version's error bases are.
    public struct Code: RawRepresentable, Sendable, Hashable {
        /// The raw `pj_status_t`.
        public let rawValue: Int32
        /// Wraps a raw `pj_status_t`.
        public init(rawValue: Int32) { self.rawValue = rawValue }
    }

    /// The status pjproject returned.
    public var code: Code
    /// The pjproject function that failed, for example `pjsua_call_make_call`.
    public var function: String
    /// pjproject's description of the status (`pj_strerror`), captured when thrown.
    public var message: String
    /// The SIP status code (100–699) when the status stands for a SIP response.
    public var sipStatus: Int?

    /// Creates an error from its parts; the engine fills these from pjproject.
    public init(code: Code, function: String, message: String, sipStatus: Int? = nil) {
        self.code = code
        self.function = function
        self.message = message
        self.sipStatus = sipStatus
    }

    /// `<function> failed: <message> (status <code>[, SIP <sipStatus>])`, for example
    /// `pjsua_call_make_call failed: Too many objects of the specified type (PJ_ETOOMANY) (status 70010)`.
    public var description: String {
        var text = "\(function) failed: \(message) (status \(code.rawValue)"
        if let sipStatus { text += ", SIP \(sipStatus)" }
        return text + ")"
    }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }
}

/// Misuse of the engine's lifecycle or of a handle, found before pjsua is called.
///
/// These are thrown by ``PJSUA`` methods; none of them traps or leaves the engine in a
/// different state than before the call.
public enum PJSUAUsageError: LocalizedError, Sendable, Hashable, CustomStringConvertible {
    /// The engine has not been started (or is still starting).
    case notStarted
    /// `start` was called on an engine that is running.
    case alreadyStarted
    /// The engine has been shut down; `start` it again to use it.
    case shutDown
    /// Another ``PJSUA`` instance is running in this process; pjsua is one per process.
    case anotherEngineRunning
    /// The call handle does not name a live call: it ended, or its slot now holds a newer call.
    case unknownCall(Call)
    /// The account handle does not name a live account.
    case unknownAccount(Account)
    /// The transport handle does not name a transport of this run of the engine (or the
    /// engine has none).
    case unknownTransport(Transport?)
    /// The player, recorder, tone player or frame stream handle does not name a live port.
    case unknownMediaPort
    /// The operation needs an account with a registrar, and this one has none.
    case noRegistrar
    /// The string is not a valid SIP or SIPS URI.
    case invalidURI(String)
    /// The SIP status code is outside the range the operation accepts.
    case invalidStatusCode(Int)
    /// A ``Configuration`` or ``AccountConfiguration`` value is out of range; the text names it.
    case invalidConfiguration(String)
    /// An argument of the call is out of range (a tone, an audio frame format, a codec
    /// priority, a transfer target); the text names it and the range.
    case invalidArgument(String)
    /// The call is in a state where the operation is not allowed (for example answering
    /// a call that is already confirmed).
    case invalidCallState(Call, CallState)
    /// A custom header has an empty or non-token name, a value with a line break or control
    /// character (which would let it inject other headers), a name pjsip writes itself, or a
    /// value pjsip's parser rejects for a header it knows (`Expires: soon`). Holds `Name: value`.
    case invalidHeader(String)
    /// The DTMF string is empty or holds a character other than `0`–`9`, `*`, `#`, `A`–`D`.
    case invalidDTMFDigits(String)
    /// A transfer was asked for on a call whose previous REFER has no final outcome yet
    /// (see ``PJSUA/transfer(_:to:headers:)``).
    case transferPending(Call)
    /// ``PJSUA/handleNetworkChange(_:)`` was called while pjsua is still handling the
    /// previous change (pjsua would interleave the two).
    case networkChangeInProgress
    /// The handle names no buddy of the running engine (removed, or from an earlier run).
    case unknownBuddy(Buddy)
    /// The pjproject the engine was built against lacks what was asked for (the text says
    /// what; for instance dialog-event subscriptions with pjproject 2.12.1).
    case unsupported(String)

    /// What went wrong, in one line, for example `no live call for handle call 3.17`.
    public var description: String {
        switch self {
        case .notStarted: "the engine is not started"
        case .alreadyStarted: "the engine is already started"
        case .shutDown: "the engine has been shut down"
        case .anotherEngineRunning: "another PJSUA engine is running in this process"
        case .unknownCall(let call): "no live call for handle \(call)"
        case .unknownAccount(let account): "no live account for handle \(account)"
        case .unknownTransport(let transport?): "no transport for handle \(transport) in this run of the engine"
        case .unknownTransport(nil): "the engine has no transport"
        case .unknownMediaPort: "no live player, recorder or frame port for that handle"
        case .noRegistrar: "the account has no registrar"
        case .invalidURI(let uri): "not a valid SIP URI: \(uri)"
        case .invalidStatusCode(let code): "SIP status code \(code) is not allowed here"
        case .invalidConfiguration(let text): "invalid configuration: \(text)"
        case .invalidArgument(let text): "invalid argument: \(text)"
        case .invalidCallState(let call, let state): "call \(call) is \(state)"
        case .invalidHeader(let header): "not a valid SIP header: \(header)"
        case .invalidDTMFDigits(let digits): "not valid DTMF digits: \(digits)"
        case .transferPending(let call): "\(call) already has a transfer (REFER) waiting for its outcome"
        case .networkChangeInProgress: "the engine is still handling the previous network change"
        case .unknownBuddy(let buddy): "no buddy for handle \(buddy) in this run of the engine"
        case .unsupported(let text): "not supported by this pjproject build: \(text)"
        }
    }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }
}

/// The pjproject libraries loaded at run time are not the version the engine was compiled
/// against.
///
/// Every pjproject release names its libraries `libpj*.so.2`, so a binary built against
/// one version can load another (for example when two are installed and the dynamic
/// linker finds the other first). pjsua's structs change between versions, so
/// ``PJSUA/start(_:)`` refuses to run rather than corrupt memory. Rebuild against the
/// pjproject you run, or make the one you built against the one that loads (an rpath,
/// `LD_LIBRARY_PATH`, or removing the other).
public struct PJProjectVersionMismatchError: LocalizedError, Sendable, Hashable, CustomStringConvertible {
    /// The version of the pjproject headers the engine was compiled against, e.g. `2.17`.
    public var compiledVersion: String
    /// The version of the pjproject libraries loaded at run time (`pj_get_version`).
    public var loadedVersion: String

    /// Creates the error from both versions.
    public init(compiledVersion: String, loadedVersion: String) {
        self.compiledVersion = compiledVersion
        self.loadedVersion = loadedVersion
    }

    /// Both versions, for logs: `pjproject 2.12.1 is loaded, but the engine was compiled
    /// against pjproject 2.17`.
    public var description: String {
        "pjproject \(loadedVersion) is loaded, but the engine was compiled against pjproject \(compiledVersion)"
    }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }
}
