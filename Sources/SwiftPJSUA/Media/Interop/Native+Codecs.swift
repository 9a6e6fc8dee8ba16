import CPJSUAShim

extension Native {
    // MARK: Codecs

    /// The media endpoint's codecs with their priorities (`pjsua_enum_codecs`).
    static func codecs() throws(PJSUAError) -> [CodecInfo] {
        let capacity = 64
        let infos = UnsafeMutablePointer<pjsua_codec_info>.allocate(capacity: capacity)
        defer { infos.deallocate() }
        var count = UInt32(capacity)
        try PJ.check(pjsua_enum_codecs(infos, &count), "pjsua_enum_codecs")
        // Each codec_id points into its own element's buffer: read it before returning.
        return (0..<Int(count)).map { index in
            CodecInfo(id: PJ.string(infos[index].codec_id), priority: Int(infos[index].priority))
        }
    }

    /// Sets the priority of every codec whose id starts with `id` (`pjsua_codec_set_priority`).
    static func setCodecPriority(_ id: String, _ priority: Int) throws(PJSUAError) {
        let status = PJ.withPJString(id) { text in
            var text = text
            return pjsua_codec_set_priority(&text, pj_uint8_t(priority))
        }
        try PJ.check(status, "pjsua_codec_set_priority", subject: id)
    }
}
