/// A handle to a WAV file player attached to a call. pjsua reuses player ids; the
/// generation keeps a stopped player's handle from stopping a newer one.
public struct Player: Hashable, Sendable {
    /// The pjsua player id (`pjsua_player_id`).
    public let id: Int32
    /// A process-wide counter value given to the player when it was created.
    public let generation: UInt64
    /// The call the player feeds.
    public let call: Call
    /// Creates a handle; handles come from the engine. Public so that a test double can mint
    /// them: a handle made up this way names no player of a running engine, which throws
    /// ``PJSUAUsageError`` for it.
    public init(id: Int32, generation: UInt64, call: Call) {
        self.id = id
        self.generation = generation
        self.call = call
    }
}

/// A handle to a WAV file recorder attached to a call, with a generation like ``Player``.
public struct Recorder: Hashable, Sendable {
    /// The pjsua recorder id (`pjsua_recorder_id`).
    public let id: Int32
    /// A process-wide counter value given to the recorder when it was created.
    public let generation: UInt64
    /// The call whose received audio is recorded.
    public let call: Call
    /// Creates a handle; handles come from the engine. Public so that a test double can mint
    /// them: a handle made up this way names no recorder of a running engine, which throws
    /// ``PJSUAUsageError`` for it.
    public init(id: Int32, generation: UInt64, call: Call) {
        self.id = id
        self.generation = generation
        self.call = call
    }
}

/// The payload of ``PJSUAEvent/playbackFinished(_:)``.
public struct PlaybackFinished: Sendable, Hashable {
    /// The player that reached the end of its file.
    public var player: Player
    /// The call it plays into.
    public var call: Call { player.call }

    /// Creates the payload; the engine makes one when a player's file ends.
    public init(player: Player) {
        self.player = player
    }
}
