/// A handle to one call.
///
/// pjsua reuses call slots (`pjsua_call_id`). A `Call` pairs the slot with a generation
/// number unique within the process, so a handle kept after its call ended can never act
/// on, or receive events of, a newer call in the same slot: operations on it throw
/// ``PJSUAUsageError/unknownCall(_:)``.
public struct Call: Hashable, Sendable, CustomStringConvertible {
    /// The pjsua call slot (`pjsua_call_id`), 0 up to the configured call limit.
    public let slot: Int32
    /// A process-wide counter value given to the call when it was created.
    public let generation: UInt64

    /// Creates a handle; handles come from the engine's events and `makeCall`.
    public init(slot: Int32, generation: UInt64) {
        self.slot = slot
        self.generation = generation
    }

    /// The slot and generation, for logs: `call 3#17`.
    public var description: String { "call \(slot)#\(generation)" }
}

/// A handle to one SIP account (an identity, optionally registered with a registrar).
///
/// Like ``Call``, it carries a generation so that a removed account's handle cannot act
/// on an account that later reuses the same pjsua slot.
public struct Account: Hashable, Sendable, CustomStringConvertible {
    /// The pjsua account slot (`pjsua_acc_id`).
    public let slot: Int32
    /// A process-wide counter value given to the account when it was added.
    public let generation: UInt64

    /// Creates a handle; handles come from the engine's account methods.
    public init(slot: Int32, generation: UInt64) {
        self.slot = slot
        self.generation = generation
    }

    /// The slot and generation, for logs: `account 0#2`.
    public var description: String { "account \(slot)#\(generation)" }
}

/// A handle to one SIP transport (a bound UDP socket or TCP listener).
public struct Transport: Hashable, Sendable, CustomStringConvertible {
    /// The pjsua transport id (`pjsua_transport_id`).
    public let id: Int32

    /// Creates a handle; handles come from ``PJSUA/transports()``.
    public init(id: Int32) { self.id = id }

    /// The transport id, for logs: `transport 1`.
    public var description: String { "transport \(id)" }
}
