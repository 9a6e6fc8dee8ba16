/// What the engine and pjsua's call callbacks share about calls while the engine runs, behind
/// one lock (``EngineBridge/calls``).
struct CallsState: Sendable {
    /// Incoming calls' Call-IDs longer than `pjsua_call_info` holds, by call generation.
    var longCallIDs: [UInt64: String] = [:]
    /// The account each live call was first seen with, by call generation: pjsua names
    /// accounts by slot, and a removed account's slot can go to a new account while the call
    /// lives on. Removed when the call ends.
    var callAccounts: [UInt64: Account] = [:]
    /// How incoming REFERs are answered; read by the transfer-request callback.
    var transferHandler: (@Sendable (TransferRequest) -> TransferDecision)?
    /// How INVITEs with `Replaces` are answered; read by the replace-request callback.
    var replaceHandler: (@Sendable (ReplaceRequest) -> ReplaceDecision)?
    /// What the replace-request callback read from an accepted INVITE with `Replaces`, by
    /// the replaced call's generation, for the replaced-call callback that reports the new
    /// call right after (it gets no request).
    var pendingReplacements: [UInt64: PendingReplacement] = [:]
    /// Hold, resume and network-change re-INVITEs awaiting their final response, by call
    /// generation (see ``Native/sendReoffer(_:slot:purpose:attempts:bridge:)``).
    var pendingReoffers: [UInt64: PendingReoffer] = [:]
    /// How many re-INVITEs and UPDATEs the app sent (``PJSUA/reinvite(_:includingSDP:headers:)``,
    /// ``PJSUA/update(_:includingSDP:headers:)``) still await a final response, by call generation:
    /// a refusal of one of those is not a failed session refresh.
    var requestedOffers: [UInt64: Int] = [:]

    /// Counts down one of the app's requests of `call` that got its final response; `false`
    /// when none was outstanding.
    mutating func settleRequestedOffer(of call: Call) -> Bool {
        guard let count = requestedOffers[call.generation] else { return false }
        requestedOffers[call.generation] = count > 1 ? count - 1 : nil
        return true
    }

    /// Forgets what is kept about a call that ended.
    mutating func forget(_ call: Call) {
        longCallIDs[call.generation] = nil
        callAccounts[call.generation] = nil
        requestedOffers[call.generation] = nil
    }
}
