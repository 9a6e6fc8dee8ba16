import Foundation

// The Kit names of the earlier iOS-only swift-pjsua, kept compiling (deprecated, each naming
// its replacement). The UUIDs are the earlier package's too: the same namespace and algorithm.

extension CallIdentity {
    /// The call's UUID, with the earlier swift-pjsua's labels: the server's UUID, else the
    /// version-5 UUID of the Call-ID in ``namespace``, else a random one.
    /// - Returns: what ``uuid(serverUUID:sipCallID:)`` returns.
    @available(*, deprecated, renamed: "uuid(serverUUID:sipCallID:)")
    public static func uuid(serverProvided: UUID?, sipCallID: String?) -> UUID {
        uuid(serverUUID: serverProvided, sipCallID: sipCallID)
    }
}

extension UUID {
    /// A name-based UUID, version 5, with the earlier swift-pjsua's labels.
    /// - Parameters:
    ///   - name: the name; its UTF-8 bytes are hashed exactly as given.
    ///   - namespace: the namespace UUID.
    @available(*, deprecated, message: "use UUID.nameBased(namespace:name:)")
    public init(version5 name: String, namespace: UUID) {
        self = UUID.nameBased(namespace: namespace, name: name)
    }
}
