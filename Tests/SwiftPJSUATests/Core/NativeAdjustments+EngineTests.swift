import CPJSIP
import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

extension PJSUA {
    /// The thread the engine's actor runs on (its executor's thread).
    fileprivate func engineThread() -> pthread_t { pthread_self() }
}

/// A UDP SIP peer on 127.0.0.1 that reads requests as text and answers them with a status
/// built from the request's own Via, From, To, Call-ID and CSeq (RFC 3261 §8.2.6.2).
private final class RequestSink: @unchecked Sendable {
    // Unchecked: one test drives it from one task.
    let fd: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard fd >= 0, bound else {
            Glibc.close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    func close() { Glibc.close(fd) }

    /// The next request whose start line begins with `method`, and where it came from.
    func request(_ method: String, timeout: Duration) async -> (text: String, from: sockaddr_in)? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            // Waits on the socket itself, 10 ms at a time, letting other tasks run in between.
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 10) > 0 else {
                await Task.yield()
                continue
            }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var source = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = withUnsafeMutablePointer(to: &source) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(fd, &buffer, buffer.count, 0, $0, &length)
                }
            }
            guard count > 0 else { continue }
            let text = String(decoding: buffer.prefix(count), as: UTF8.self)
            if text.hasPrefix(method + " ") { return (text, source) }
        }
        return nil
    }

    /// Answers `request` with `status` (no body), to where it came from.
    func respond(to request: (text: String, from: sockaddr_in), status: String) {
        let lines = request.text.components(separatedBy: "\r\n")
        let copied = lines.filter { line in
            ["via:", "from:", "call-id:", "cseq:", "v:", "f:", "i:"].contains { line.lowercased().hasPrefix($0) }
        }
        let to = lines.first { $0.lowercased().hasPrefix("to:") || $0.lowercased().hasPrefix("t:") } ?? "To: <sip:x@x>"
        let response = (["SIP/2.0 \(status)"] + copied + [to + ";tag=sink", "Content-Length: 0", "", ""])
            .joined(separator: "\r\n")
        var destination = request.from
        _ = Array(response.utf8).withUnsafeBytes { bytes in
            withUnsafePointer(to: &destination) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }
}

/// The header values named `name` in a SIP message's text.
private func headerValues(_ name: String, in text: String) -> [String] {
    text.components(separatedBy: "\r\n").compactMap { line in
        guard let colon = line.firstIndex(of: ":"),
            line[..<colon].trimmingCharacters(in: .whitespaces).lowercased() == name.lowercased()
        else { return nil }
        return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
}

extension EngineTests {
    @Test("Native adjustments run on the engine thread and their settings reach the wire")
    func nativeAdjustmentsReachTheWire() async throws {
        let sink = try RequestSink()
        defer { sink.close() }
        let threads = Protected<[String: pthread_t]>([:])
        let transportPort = FreePort.udp()
        var adjustments = NativeAdjustments()
        // A global outbound proxy (pjsua_config.outbound_proxy): the engine models only
        // per-account proxies.
        adjustments.ua = NativeAdjustment { config, strings in
            threads.withLock { $0["ua"] = pthread_self() }
            config.outbound_proxy_cnt = 1
            config.outbound_proxy.0 = strings.pjString("<sip:127.0.0.1:\(sink.port);lr>")
        }
        adjustments.logging = NativeAdjustment { _ in threads.withLock { $0["logging"] = pthread_self() } }
        adjustments.media = NativeAdjustment { _ in threads.withLock { $0["media"] = pthread_self() } }
        // An INVITE without an offer (RFC 3261 §13.2.1: the offer comes in the 2xx).
        adjustments.callSetting = NativeAdjustment { setting in
            threads.withLock { $0["call"] = pthread_self() }
            setting.flag |= UInt32(PJSUA_CALL_NO_SDP_OFFER.rawValue)
        }
        var transport = TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)
        transport.nativeAdjustment = NativeTransportAdjustment { config in
            threads.withLock { $0["transport"] = pthread_self() }
            config.port = UInt32(transportPort)
        }
        let engineThread = Protected<pthread_t?>(nil)
        try await EngineHarness.run(transports: [transport], nativeAdjustments: adjustments) { h in
            let thread = await h.engine.engineThread()
            engineThread.withLock { $0 = thread }
            #expect(h.transport.port == transportPort)
            // RFC 4028 session timers, which the engine does not model.
            var alice = AccountConfiguration(identity: "sip:alice@127.0.0.1")
            alice.nativeAdjustment = NativeAccountAdjustment { config in
                threads.withLock { $0["account"] = pthread_self() }
                config.use_timer = PJSUA_SIP_TIMER_ALWAYS
                config.timer_setting.sess_expires = 1234
                config.timer_setting.min_se = 90
            }
            let account = try await h.engine.addAccount(alice)
            #expect(try await h.engine.accountConfiguration(account).nativeAdjustment == alice.nativeAdjustment)
            // Addressed elsewhere: the INVITE goes to the outbound proxy, the sink.
            let call = try await h.engine.makeCall(to: "sip:bob@127.0.0.1:9", from: account)
            let invite = try #require(await sink.request("INVITE", timeout: .seconds(10)))
            #expect(invite.text.hasPrefix("INVITE sip:bob@127.0.0.1:9 SIP/2.0"), "\(invite.text)")
            #expect(
                headerValues("Route", in: invite.text).contains { $0.contains("127.0.0.1:\(sink.port)") },
                "\(invite.text)")
            #expect(headerValues("Session-Expires", in: invite.text).first?.hasPrefix("1234") == true, "\(invite.text)")
            #expect(headerValues("Min-SE", in: invite.text).first == "90", "\(invite.text)")
            #expect(headerValues("Content-Length", in: invite.text + "\r\n").first == "0", "\(invite.text)")
            #expect(!invite.text.contains("m=audio"), "\(invite.text)")
            sink.respond(to: invite, status: "486 Busy Here")
            let end = try await h.log.first("DISCONNECTED") { $0.isState(.disconnected, of: call) }
            #expect(end.finalStatus == 486, "\(end)")
        }
        let seen = threads.withLock { $0 }
        #expect(Set(seen.keys) == ["ua", "logging", "media", "call", "transport", "account"], "\(seen)")
        let engine = try #require(engineThread.withLock { $0 })
        #expect(seen.values.allSatisfy { pthread_equal($0, engine) != 0 }, "\(seen) vs \(engine)")
        #expect(pthread_equal(pthread_self(), engine) == 0)
    }

    @Test("An account adjustment given to modifyAccount applies to the account's next INVITE")
    func accountAdjustmentOnModify() async throws {
        let sink = try RequestSink()
        defer { sink.close() }
        try await EngineHarness.run { h in
            var alice = AccountConfiguration(identity: "sip:alice@127.0.0.1", transport: h.transport.transport)
            let account = try await h.engine.addAccount(alice)
            alice.nativeAdjustment = NativeAccountAdjustment { config in
                config.use_timer = PJSUA_SIP_TIMER_ALWAYS
                config.timer_setting.sess_expires = 4321
            }
            try await h.engine.modifyAccount(account, alice)
            let call = try await h.engine.makeCall(to: "sip:sink@127.0.0.1:\(sink.port)", from: account)
            let invite = try #require(await sink.request("INVITE", timeout: .seconds(10)))
            #expect(headerValues("Session-Expires", in: invite.text).first?.hasPrefix("4321") == true, "\(invite.text)")
            sink.respond(to: invite, status: "486 Busy Here")
            try await h.log.first("DISCONNECTED") { $0.isState(.disconnected, of: call) }
            // The handle survived the modification (its generation is in pjsua's user data).
            #expect(try await h.engine.accountInfo(account).account == account)
        }
    }

    @Test("Media and logging adjustments: 40 ms RTP packets, log lines without pjlib's time stamp")
    func mediaAndLoggingAdjustments() async throws {
        let lines = LineLog()
        var adjustments = NativeAdjustments()
        // The codec's packet time (pjsua_media_config.ptime), which the engine does not model:
        // 40 ms of PCMU is 320 payload bytes per RTP packet instead of the 160 of 20 ms.
        adjustments.media = NativeAdjustment { $0.ptime = 40 }
        adjustments.logging = NativeAdjustment {
            $0.decor = UInt32(PJ_LOG_HAS_SENDER.rawValue | PJ_LOG_HAS_NEWLINE.rawValue)
        }
        try await EngineHarness.run(logHandler: lines, logLevel: 4, nativeAdjustments: adjustments) { h in
            for codec in try await h.engine.codecs() where !codec.id.hasPrefix("PCMU/") {
                try await h.engine.setCodecPriority(codec.id, 0)
            }
            let (caller, callee) = try await h.selfCall()
            try await h.poll("10 RTP packets from the caller") {
                try await $0.streamStatistics(caller).packetsSent >= 10
            }
            let sent = try await h.engine.streamStatistics(caller)
            #expect(sent.bytesSent == sent.packetsSent * 320, "\(sent)")
            try await h.hangUp(caller, waitingFor: callee)
        }
        // pjsip's message trace of the INVITE, from after pjsua_init applied the decoration.
        let trace = lines.lines.filter { $0.contains("Request msg INVITE") }
        #expect(!trace.isEmpty)
        #expect(!trace.contains { $0.firstMatch(of: #/^\s*\d\d:\d\d:\d\d\.\d{3}/#) != nil }, "\(trace)")
    }

    @Test("Adjustments that clear pjsua's callbacks, worker thread and handle data cannot break the engine")
    func nativeAdjustmentsCannotBreakTheEngine() async throws {
        var adjustments = NativeAdjustments()
        adjustments.ua = NativeAdjustment { config in
            config.cb = pjsua_callback()
            config.thread_cnt = 0
            config.max_calls = 0
        }
        adjustments.logging = NativeAdjustment { $0.cb = nil }
        adjustments.media = NativeAdjustment { media in
            media.has_ioqueue = 0
            media.thread_cnt = 0
            media.max_media_ports = 1
        }
        adjustments.callSetting = NativeAdjustment { $0.vid_cnt = 4 }
        try await EngineHarness.run(nativeAdjustments: adjustments) { h in
            var selfAccount = AccountConfiguration(identity: "sip:self@127.0.0.1", transport: h.transport.transport)
            selfAccount.nativeAdjustment = NativeAccountAdjustment { config in
                config.user_data = UnsafeMutableRawPointer(bitPattern: 0x5eed)
                config.register_on_acc_add = 1
            }
            let account = try await h.engine.addAccount(selfAccount)
            // The handle's generation is the engine's, not the user data the closure set.
            #expect(account.generation != 0x5eed)
            #expect(try await h.engine.accountInfo(account).account == account)
            // Events still arrive (pjsua's callbacks and its worker are the engine's), the
            // handle is the engine's, and the call is audio only with working media.
            let (caller, callee) = try await h.selfCall(from: account)
            #expect(try await h.engine.callInfo(caller).media.allSatisfy { $0.type == .audio })
            try await h.hangUp(caller, waitingFor: callee)
            // The account was not registered with a REGISTER of its own (it has no registrar).
            #expect(!h.log.events.contains { $0.isRegistration(of: account) })
        }
    }
}

/// Every log line, in order.
private final class LineLog: PJSUALogHandler {
    private let received = Protected<[String]>([])
    func log(level: Int, message: String) { received.withLock { $0.append(message) } }
    var lines: [String] { received.withLock { $0 } }
}
