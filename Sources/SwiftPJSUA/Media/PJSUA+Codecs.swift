extension PJSUA {
    // MARK: Codecs

    /// The codecs pjproject provides (Opus, PCMU/PCMA, G.722, GSM, Speex, iLBC… as built),
    /// highest priority first. Wraps `pjsua_enum_codecs`.
    /// - Throws: ``PJSUAUsageError`` when not running.
    public func codecs() throws -> [CodecInfo] {
        _ = try runtime()
        return try Native.codecs().sorted { $0.priority > $1.priority }
    }

    /// Sets a codec's priority for new offers and answers; 0 disables it.
    /// Wraps `pjsua_codec_set_priority`.
    /// - Parameters:
    ///   - id: a codec id or its prefix (`PCMU`, `opus/48000`); every codec that matches is set.
    ///   - priority: 0–255, higher first.
    /// - Throws: ``PJSUAUsageError/invalidArgument(_:)`` for a priority outside 0–255
    ///   or an empty id;
    ///   ``PJSUAError`` with ``PJSUAError/Code/notFound`` for an unknown codec.
    public func setCodecPriority(_ id: String, _ priority: Int) throws {
        _ = try runtime()
        guard (0...255).contains(priority) else {
            throw PJSUAUsageError.invalidArgument("codec priority must be 0...255, got \(priority)")
        }
        // pjsua matches ids by prefix: an empty one would set every codec.
        guard !id.isEmpty else { throw PJSUAUsageError.invalidArgument("empty codec id") }
        try Native.setCodecPriority(id, priority)
    }

    /// Sets ``MediaConfiguration/codecOrder`` (`pjsua_codec_set_priority` for each codec).
    static func applyCodecOrder(_ order: [String]) throws {
        let changes = try CodecOrder.priorities(
            order: order, codecs: Native.codecs(), skipsMissing: order == MediaConfiguration.defaultCodecOrder)
        for change in changes { try Native.setCodecPriority(change.id, change.priority) }
    }
}
