import CPJSUAShim

/// SHA-1 from pjlib-util (already linked with pjsua), for name-based UUIDs (RFC 4122 v5).
/// Not for security: SHA-1 is broken for collision resistance.
public enum SHA1 {
    /// The 20-byte SHA-1 digest of `bytes`. Wraps `pj_sha1_init`/`update`/`final`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var context = pj_sha1_context()
        pj_sha1_init(&context)
        bytes.withUnsafeBufferPointer { buffer in
            if let base = buffer.baseAddress { pj_sha1_update(&context, base, pj_size_t(buffer.count)) }
        }
        var digest = [UInt8](repeating: 0, count: 20)
        digest.withUnsafeMutableBufferPointer { buffer in
            if let base = buffer.baseAddress { pj_sha1_final(&context, base) }
        }
        return digest
    }
}
