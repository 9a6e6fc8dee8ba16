import CPJSUAShim

/// `pjsua_logging_config.cb` and `pj_log_set_log_func`: one pjsip log line, handed to the
/// running engine's ``PJSUALogHandler`` without its line break.
func onLog(_ level: Int32, _ data: UnsafePointer<CChar>?, _ length: Int32) {
    guard let data, length > 0, let handler = EngineBridge.active()?.logHandler else { return }
    var text = String(decoding: UnsafeRawBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    while text.last == "\n" || text.last == "\r" { text.removeLast() }
    handler.log(level: Int(level), message: text)
}
