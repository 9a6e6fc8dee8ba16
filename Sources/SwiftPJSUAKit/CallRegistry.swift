import Foundation
import SwiftPJSUA

/// Every logical call the app knows of, each recorded once whichever of its push and its
/// INVITE arrives first.
///
/// A value type with no clock and no engine: the ``CallRouter`` owns one, schedules the
/// expiry of push-only entries and removes entries when calls end.
///
/// Matching an INVITE to an entry: first by the exact Call-ID (byte for byte, no trimming or
/// case folding); else by the server's UUID, when the INVITE carries one and a push-only entry
/// has it; else by the oldest push-only entry that has no Call-ID and whose account hint is
/// the INVITE's account's hint (or which has no hint); else the INVITE is a new call.
public struct CallRegistry: Sendable {
    /// One logical call.
    public struct Entry: Sendable, Hashable, Identifiable {
        /// The call's UUID, fixed when the entry is created.
        public let id: UUID
        /// Whether we placed the call.
        public let isOutgoing: Bool
        /// The SIP Call-ID, once the push or the INVITE has told it.
        public internal(set) var sipCallID: String?
        /// The engine's call, once the INVITE arrived (or the outgoing call was placed).
        public internal(set) var call: Call?
        /// The account, once the INVITE arrived.
        public internal(set) var account: Account?
        /// The account hint from the push, if any.
        public internal(set) var accountHint: String?
        /// The far end.
        public internal(set) var remote: SIPAddress
        /// Whether the call offers video.
        public internal(set) var hasVideo: Bool

        /// An incoming call known only from its push: no INVITE yet.
        public var isPushOnly: Bool { !isOutgoing && call == nil }

        /// What the call UI should show.
        public var update: CallUpdate {
            CallUpdate(remoteURI: remote.uri, displayName: remote.displayName, hasVideo: hasVideo)
        }
    }

    /// What an arrival (a push or an INVITE) did to the registry.
    public struct Arrival: Sendable, Hashable {
        /// The entry after the arrival.
        public var entry: Entry
        /// Whether the arrival created the entry: a new logical call.
        public var isNew: Bool
        /// Whether an existing entry's ``Entry/update`` changed (the INVITE brought a
        /// display-name or video the push lacked).
        public var updateChanged: Bool
    }

    private var entries: [UUID: Entry] = [:]
    /// UUIDs in arrival order, so "the next INVITE" reconciles with the oldest push.
    private var order: [UUID] = []

    /// Creates an empty registry.
    public init() {}

    /// Every entry, oldest first.
    public var all: [Entry] { order.compactMap { entries[$0] } }

    /// The entry with this UUID.
    public subscript(id: UUID) -> Entry? { entries[id] }

    /// The entry of an engine call.
    public func entry(for call: Call) -> Entry? {
        all.first { $0.call == call }
    }

    /// The entry with exactly this Call-ID.
    public func entry(sipCallID: String) -> Entry? {
        all.first { $0.sipCallID == sipCallID }
    }

    /// Records a call push.
    ///
    /// Joins the entry with the same Call-ID or the same UUID if there is one (filling in what
    /// it lacks); otherwise creates one with the UUID ``CallIdentity`` resolves.
    /// - Parameter push: the parsed push.
    /// - Returns: the arrival.
    public mutating func recordPush(_ push: IncomingCallPush) -> Arrival {
        let byCallID = push.sipCallID.flatMap { entry(sipCallID: $0) }
        let byUUID = push.serverUUID.flatMap { entries[$0] }
        if var existing = byCallID ?? byUUID {
            let before = existing.update
            if existing.sipCallID == nil { existing.sipCallID = push.sipCallID }
            if existing.accountHint == nil { existing.accountHint = push.accountHint }
            if existing.remote.displayName == nil { existing.remote.displayName = push.caller.displayName }
            entries[existing.id] = existing
            return Arrival(entry: existing, isNew: false, updateChanged: existing.update != before)
        }
        let created = Entry(
            id: CallIdentity.uuid(serverUUID: push.serverUUID, sipCallID: push.sipCallID),
            isOutgoing: false, sipCallID: push.sipCallID, call: nil, account: nil,
            accountHint: push.accountHint, remote: push.caller, hasVideo: push.hasVideo)
        insert(created)
        return Arrival(entry: created, isNew: true, updateChanged: false)
    }

    /// Records an INVITE.
    /// - Parameters:
    ///   - call: the engine's call.
    ///   - account: the account it arrived on.
    ///   - accountHint: that account's push hint, if it has one.
    ///   - sipCallID: the INVITE's Call-ID, exactly as received.
    ///   - from: the From header.
    ///   - hasVideo: whether the offer has video.
    ///   - serverUUID: the call's UUID as the server put it in the INVITE (a header), if any.
    ///   - newID: the UUID to give the call if it is new; `nil` resolves it with
    ///     ``CallIdentity`` from `serverUUID` and the Call-ID. The router passes the UUID a
    ///     PushKit adapter already claimed.
    /// - Returns: the arrival.
    public mutating func recordInvite(
        call: Call, account: Account, accountHint: String?, sipCallID: String, from: SIPAddress, hasVideo: Bool,
        serverUUID: UUID? = nil, newID: UUID? = nil
    ) -> Arrival {
        let byServerUUID = serverUUID.flatMap { entries[$0] }.flatMap { candidate in
            candidate.isPushOnly && (candidate.sipCallID == nil || candidate.sipCallID == sipCallID) ? candidate : nil
        }
        let reconciled =
            entry(sipCallID: sipCallID) ?? byServerUUID
            ?? all.first { candidate in
                candidate.isPushOnly && candidate.sipCallID == nil
                    && (candidate.accountHint == nil || candidate.accountHint == accountHint)
            }
        if var existing = reconciled, existing.call == nil, !existing.isOutgoing {
            let before = existing.update
            existing.call = call
            existing.account = account
            existing.sipCallID = sipCallID
            if existing.remote.displayName == nil { existing.remote.displayName = from.displayName }
            existing.hasVideo = existing.hasVideo || hasVideo
            entries[existing.id] = existing
            return Arrival(entry: existing, isNew: false, updateChanged: existing.update != before)
        }
        // A fresh call, or a second INVITE with a Call-ID already in use (a retransmission
        // pjsip did not absorb, or a misbehaving peer): a UUID of its own, random if taken.
        var id = newID ?? CallIdentity.uuid(serverUUID: serverUUID, sipCallID: sipCallID)
        if entries[id] != nil { id = UUID() }
        let created = Entry(
            id: id, isOutgoing: false, sipCallID: sipCallID, call: call, account: account,
            accountHint: accountHint, remote: from, hasVideo: hasVideo)
        insert(created)
        return Arrival(entry: created, isNew: true, updateChanged: false)
    }

    /// Records a call that replaces another (an INVITE with `Replaces`, RFC 3891): the
    /// replaced call's entry carries on with the new call, keeping its UUID, so the call UI
    /// shows one call continuing (with the far end the new INVITE names).
    /// - Parameters:
    ///   - old: the replaced call.
    ///   - new: the call that takes its place.
    ///   - sipCallID: the new call's Call-ID.
    ///   - from: the new INVITE's From header: the far end from now on.
    ///   - hasVideo: whether the new offer has video.
    /// - Returns: the arrival (never new), or `nil` when no entry holds `old`.
    public mutating func recordReplacement(
        of old: Call, by new: Call, sipCallID: String, from: SIPAddress, hasVideo: Bool
    ) -> Arrival? {
        guard var existing = entry(for: old) else { return nil }
        let before = existing.update
        existing.call = new
        existing.sipCallID = sipCallID
        existing.remote = from
        existing.hasVideo = hasVideo
        entries[existing.id] = existing
        return Arrival(entry: existing, isNew: false, updateChanged: existing.update != before)
    }

    /// Records a call we placed.
    /// - Parameters:
    ///   - id: the UUID the call UI gave it.
    ///   - call: the engine's call.
    ///   - account: the account it was placed from.
    ///   - remote: the far end.
    ///   - hasVideo: whether video was asked for.
    /// - Returns: the entry.
    @discardableResult
    public mutating func recordOutgoing(
        id: UUID, call: Call, account: Account, remote: SIPAddress, hasVideo: Bool
    ) -> Entry {
        let entry = Entry(
            id: id, isOutgoing: true, sipCallID: nil, call: call, account: account, accountHint: nil,
            remote: remote, hasVideo: hasVideo)
        insert(entry)
        return entry
    }

    /// Fills in the Call-ID of an entry that lacks one (an outgoing call, once its first
    /// state event tells it). Does nothing if the entry has one.
    public mutating func noteCallID(_ sipCallID: String, of id: UUID) {
        guard var entry = entries[id], entry.sipCallID == nil, !sipCallID.isEmpty else { return }
        entry.sipCallID = sipCallID
        entries[id] = entry
    }

    /// Removes an entry (its call ended).
    /// - Returns: the removed entry, `nil` if there was none.
    @discardableResult
    public mutating func remove(_ id: UUID) -> Entry? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        order.removeAll { $0 == id }
        return entry
    }

    /// Removes an entry only if it is still push-only (its TTL ran out before the INVITE).
    /// - Returns: the removed entry, `nil` if it is gone or has its INVITE.
    public mutating func expire(_ id: UUID) -> Entry? {
        guard entries[id]?.isPushOnly == true else { return nil }
        return remove(id)
    }

    private mutating func insert(_ entry: Entry) {
        entries[entry.id] = entry
        order.append(entry.id)
    }
}
