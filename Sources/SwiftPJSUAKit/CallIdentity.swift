import Foundation

#if canImport(CryptoKit)
    import CryptoKit
#else
    import SwiftPJSUA
#endif

/// The one UUID that names a logical call across a VoIP push and its SIP INVITE.
///
/// Resolution order: the UUID the server put in the push or the INVITE; else a name-based
/// UUID (version 5, RFC 4122 §4.3) of the exact SIP Call-ID under ``namespace``, so the push
/// and the INVITE of one call map to the same UUID without talking to each other; else a
/// random UUID.
public enum CallIdentity {
    /// The namespace for Call-ID-derived UUIDs: `B2D6F0E2-9B9A-5E7C-8F1A-9C2D3E4F5A6B`, the
    /// one the earlier iOS-only swift-pjsua used. Fixed forever: a server that derives the
    /// UUID of a call from its Call-ID, and every version of an app, must agree on it.
    public static let namespace = UUID(
        uuid: (
            0xB2, 0xD6, 0xF0, 0xE2, 0x9B, 0x9A, 0x5E, 0x7C, 0x8F, 0x1A, 0x9C, 0x2D, 0x3E, 0x4F, 0x5A, 0x6B
        ))

    /// The call's UUID.
    /// - Parameters:
    ///   - serverUUID: a UUID the server supplied, used as is.
    ///   - sipCallID: the Call-ID header value, compared byte for byte (no trimming or case folding).
    /// - Returns: `serverUUID` if given; else the version-5 UUID of `sipCallID` under
    ///   ``namespace`` if it is not empty; else a new random UUID.
    public static func uuid(serverUUID: UUID? = nil, sipCallID: String? = nil) -> UUID {
        if let serverUUID { return serverUUID }
        if let sipCallID, !sipCallID.isEmpty { return UUID.nameBased(namespace: namespace, name: sipCallID) }
        return UUID()
    }

    /// The 20-byte SHA-1 digest of `bytes`, from a maintained implementation: CryptoKit's
    /// `Insecure.SHA1` on Apple platforms, pjlib-util's (already linked with pjsua) elsewhere.
    /// Used only for name-based UUIDs; SHA-1 is not collision resistant.
    static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        #if canImport(CryptoKit)
            return Array(Insecure.SHA1.hash(data: bytes))
        #else
            return SHA1.hash(bytes)
        #endif
    }
}

extension UUID {
    /// A name-based UUID, version 5 (SHA-1), as RFC 4122 §4.3 defines it.
    /// - Parameters:
    ///   - namespace: the namespace UUID (for Call-IDs, ``CallIdentity/namespace``).
    ///   - name: the name; its UTF-8 bytes are hashed exactly as given.
    /// - Returns: the UUID, the same for the same namespace and name on every platform.
    public static func nameBased(namespace: UUID, name: String) -> UUID {
        let n = namespace.uuid
        var bytes: [UInt8] = [
            n.0, n.1, n.2, n.3, n.4, n.5, n.6, n.7, n.8, n.9, n.10, n.11, n.12, n.13, n.14, n.15,
        ]
        bytes.append(contentsOf: Array(name.utf8))
        var hash = Array(CallIdentity.sha1(bytes).prefix(16))
        hash[6] = (hash[6] & 0x0F) | 0x50  // version 5
        hash[8] = (hash[8] & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(
            uuid: (
                hash[0], hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7],
                hash[8], hash[9], hash[10], hash[11], hash[12], hash[13], hash[14], hash[15]
            ))
    }
}
