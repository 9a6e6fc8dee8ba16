import CPJSUAShim
import Foundation

/// The one way C calls are made: turn a `pj_status_t` into a thrown ``PJSUAError`` that
/// carries the status, the C function's name and pjproject's text for it.
enum PJ {
    static func check(_ status: pj_status_t, _ function: String, subject: String? = nil) throws(PJSUAError) {
        guard status != cpj_success() else { return }
        var error = error(status, function)
        if let subject { error.message += ": \(subject)" }
        throw error
    }

    static func error(_ status: pj_status_t, _ function: String) -> PJSUAError {
        PJSUAError(
            code: .init(rawValue: status),
            function: function,
            message: describe(status),
            sipStatus: {
                let code = Int(cpj_sip_code_from_status(status)); return code == 0 ? nil : code
            }()
        )
    }

    /// pjproject's text for a status (`pj_strerror`), decoded by length.
    static func describe(_ status: pj_status_t) -> String {
        var buffer = [CChar](repeating: 0, count: 160)
        return buffer.withUnsafeMutableBufferPointer { buf in
            guard let base = buf.baseAddress else { return "status \(status)" }
            let text = pj_strerror(status, base, pj_size_t(buf.count))
            return string(text)
        }
    }

    /// Reads a `pj_str_t` by its length (it is not NUL-terminated), decoding UTF-8 with
    /// replacement of invalid sequences.
    static func string(_ value: pj_str_t) -> String {
        guard let ptr = value.ptr, value.slen > 0 else { return "" }
        let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(ptr), count: Int(value.slen))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads a NUL-terminated C buffer of at most `capacity` bytes.
    static func string(cBuffer ptr: UnsafePointer<CChar>, capacity: Int) -> String {
        let length = strnlen(ptr, capacity)
        return String(decoding: UnsafeRawBufferPointer(start: ptr, count: length), as: UTF8.self)
    }

    /// Runs `body` with a `pj_str_t` viewing `text`; valid only inside `body`, so pass it
    /// only to functions that copy.
    static func withPJString<R, E: Error>(
        _ text: String, _ body: (pj_str_t) throws(E) -> R
    ) throws(E) -> R {
        let scope = StringScope()
        return try body(scope.pj(text))
    }
}

/// Owns C copies of Swift strings for one scope, so a configuration struct that takes many
/// `pj_str_t`s can be filled and handed to a pjsua function that copies it.
final class StringScope {
    private var buffers: [UnsafeMutablePointer<CChar>] = []

    deinit { buffers.forEach { free($0) } }

    /// A `pj_str_t` over a copy of `text` that lives as long as this scope.
    func pj(_ text: String) -> pj_str_t {
        let copy = cString(text)
        return pj_str_t(ptr: copy, slen: pj_ssize_t(strlen(copy)))
    }

    /// A `pj_str_t` over a copy of `bytes` (which may hold NULs) that lives as long as this scope.
    func pj(bytes: [UInt8]) -> pj_str_t {
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
        for (i, byte) in bytes.enumerated() { buffer[i] = CChar(bitPattern: byte) }
        buffers.append(buffer)
        return pj_str_t(ptr: buffer, slen: pj_ssize_t(bytes.count))
    }

    /// A NUL-terminated copy of `text` that lives as long as this scope.
    func cString(_ text: String) -> UnsafeMutablePointer<CChar> {
        let bytes = Array(text.utf8)
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        bytes.withUnsafeBufferPointer { src in
            for (i, byte) in src.enumerated() { buffer[i] = CChar(bitPattern: byte) }
        }
        buffer[bytes.count] = 0
        buffers.append(buffer)
        return buffer
    }
}

extension PJSUAError.Code {
    /// `PJ_EINVAL`: an argument was rejected.
    public static var invalidArgument: Self { .init(rawValue: cpj_status_einval()) }
    /// `PJ_ENOTFOUND`: the object does not exist.
    public static var notFound: Self { .init(rawValue: cpj_status_enotfound()) }
    /// `PJ_ETOOMANY`: a limit was reached (calls, accounts, ports).
    public static var tooMany: Self { .init(rawValue: cpj_status_etoomany()) }
    /// `PJ_EBUSY`: the object is busy.
    public static var busy: Self { .init(rawValue: cpj_status_ebusy()) }
    /// `PJSIP_EBUSY`: pjsua_acc_set_registration while the account's REGISTER is in flight.
    static var registrationInFlight: Self { .init(rawValue: cpj_status_pjsip_ebusy()) }
    /// `PJ_EINVALIDOP`: the operation is not valid in the current state.
    public static var invalidOperation: Self { .init(rawValue: cpj_status_einvalidop()) }
    /// `PJ_ETIMEDOUT`: the operation timed out.
    public static var timedOut: Self { .init(rawValue: cpj_status_etimedout()) }
    /// `PJ_EAFNOTSUP`: the address family is not supported (for example IPv6 in a
    /// pjproject built without it).
    public static var addressFamilyNotSupported: Self { .init(rawValue: cpj_status_eafnotsup()) }
    /// `PJ_EEXISTS`: the object already exists.
    public static var alreadyExists: Self { .init(rawValue: cpj_status_eexists()) }
    /// `PJSIP_EMSGTOOLONG`: a SIP message the engine would send is longer than the build's
    /// `PJSIP_MAX_PKT_LEN` (``BuildLimits/sipMessageBytes``), for example an INVITE with
    /// large custom headers.
    public static var messageTooLong: Self { .init(rawValue: cpj_status_emsgtoolong()) }
    /// `PJ_ENOMEM`: pjproject ran out of memory in a pool.
    public static var noMemory: Self { .init(rawValue: cpj_status_enomem()) }
    /// `PJSIP_EINVALIDURI`: the URI could not be parsed.
    public static var invalidURI: Self { .init(rawValue: cpj_status_einvaliduri()) }
    /// `PJSIP_ESESSIONTERMINATED`: the INVITE session has ended.
    public static var sessionTerminated: Self { .init(rawValue: cpj_status_esessionterminated()) }
    /// `PJSIP_ESESSIONSTATE`: the INVITE session is in the wrong state for the request.
    public static var sessionState: Self { .init(rawValue: cpj_status_esessionstate()) }

    /// The status pjsip uses for a SIP final response `code` (100–699).
    public static func sip(_ code: Int) -> Self { .init(rawValue: cpj_status_from_sip(Int32(code))) }
}
