/// One codec the media endpoint offers (`pjsua_codec_info`).
public struct CodecInfo: Sendable, Hashable {
    /// pjmedia's codec id, `name/clock-rate/channels`, for example `PCMU/8000/1` or `opus/48000/2`.
    public var id: String
    /// The priority, 0–255: higher is offered first; 0 means disabled (never offered).
    public var priority: Int

    /// Creates a codec entry.
    public init(id: String, priority: Int) {
        self.id = id
        self.priority = priority
    }

    /// Whether the codec is offered in SDP.
    public var isEnabled: Bool { priority > 0 }
}

/// ``MediaConfiguration/codecOrder`` turned into codec priorities; pure Swift, applied at start.
enum CodecOrder {
    /// The highest priority the order gives (below 241–255, which stay free for
    /// ``PJSUA/setCodecPriority(_:_:)`` to put a codec above the whole order).
    static let top = 240
    /// Where the codecs the order does not list start (pjmedia's normal priority).
    static let rest = 128
    /// The most entries an order may have.
    static let maxEntries = 32

    /// Checks what can be checked before pjsua exists: entries non-empty, unique (ignoring
    /// case), without spaces or control characters, at most ``maxEntries``.
    static func validate(_ order: [String]) throws(PJSUAUsageError) {
        guard order.count <= maxEntries else {
            throw .invalidConfiguration("codecOrder has \(order.count) entries, at most \(maxEntries) are allowed")
        }
        var seen: Set<String> = []
        for entry in order {
            guard !entry.isEmpty,
                !entry.unicodeScalars.contains(where: {
                    $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F
                })
            else {
                throw .invalidConfiguration(
                    "codecOrder entry \"\(entry)\" is empty or holds a space or control character")
            }
            guard seen.insert(entry.lowercased()).inserted else {
                throw .invalidConfiguration("codecOrder lists \"\(entry)\" twice")
            }
        }
    }

    /// The priority each codec gets, for the codecs pjmedia has (any order).
    /// - Parameters:
    ///   - order: validated prefixes, most preferred first; empty keeps every priority.
    ///   - codecs: the build's codecs with their current priorities.
    ///   - skipsMissing: whether an entry matching no codec is skipped (the default order)
    ///     rather than an error.
    /// - Returns: `(codec id, priority)` for every codec whose priority changes.
    /// - Throws: ``PJSUAUsageError/invalidConfiguration(_:)`` naming an entry that matches
    ///   no codec, and the codecs there are, unless `skipsMissing`.
    static func priorities(
        order: [String], codecs: [CodecInfo], skipsMissing: Bool
    ) throws(PJSUAUsageError) -> [(id: String, priority: Int)] {
        guard !order.isEmpty else { return [] }
        // pjmedia's order: priority, then enumeration order for equal ones.
        let ranked = codecs.enumerated().sorted {
            $0.element.priority != $1.element.priority
                ? $0.element.priority > $1.element.priority : $0.offset < $1.offset
        }.map(\.element)
        var listed: [CodecInfo] = []
        for entry in order {
            let prefix = entry.lowercased()
            let matches = ranked.filter { codec in
                codec.id.lowercased().hasPrefix(prefix) && !listed.contains { $0.id == codec.id }
            }
            if matches.isEmpty, !skipsMissing, !ranked.contains(where: { $0.id.lowercased().hasPrefix(prefix) }) {
                let known = ranked.map(\.id).joined(separator: ", ")
                throw .invalidConfiguration("codecOrder entry \"\(entry)\" matches no codec of this build (\(known))")
            }
            listed += matches
        }
        var result: [(id: String, priority: Int)] = []
        for (index, codec) in listed.enumerated() { result.append((codec.id, top - index)) }
        let others = ranked.filter { codec in codec.isEnabled && !listed.contains { $0.id == codec.id } }
        for (index, codec) in others.enumerated() { result.append((codec.id, max(1, rest - index))) }
        return result
    }
}
