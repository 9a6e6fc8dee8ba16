import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// What `pkg-config --modversion libpjproject` prints in this environment (`make` points
/// pkg-config at the pjproject it builds against), or nil.
func pkgConfigVersion() -> String? {
    guard let (status, version) = commandOutput("/usr/bin/env", ["pkg-config", "--modversion", "libpjproject"])
    else { return nil }
    return status == 0 ? version : nil
}

/// The minor number of a pjproject version string ("2.17" → 17).
func pjprojectMinor(_ version: String) -> Int? {
    let parts = version.split(separator: ".")
    return parts.count >= 2 ? Int(parts[1].prefix { $0.isNumber }) : nil
}

extension EngineTests {
    @Test("The engine runs on the pjproject it was compiled against, the one pkg-config names")
    func pjprojectVersionMatches() async throws {
        let version = PJSUA.pjprojectVersion
        #expect(version.loaded == version.compiled)
        #expect(version.loaded == pkgConfigVersion(), "pkg-config names \(pkgConfigVersion() ?? "nothing")")
        let minor = try #require(pjprojectMinor(version.loaded))
        // RTP on pjmedia's own worker from 2.13, where it no longer stalls; on the SIP
        // worker in 2.12.
        #expect(PJSUA.usesMediaWorkerThread == (minor >= 13))

        // The tool says the same and exits 0.
        try await withTemporaryFolder { folder in
            let tool = try PeerProcess(
                "version", executable: Repository.tool.path, arguments: ["version"], folder: folder)
            let status = try await tool.waitForExit(timeout: .seconds(10))
            #expect(status == 0)
            #expect(tool.output.contains("pjproject \(version.loaded) loaded\n"), "\(tool.output)")
            #expect(tool.output.contains("IPv6: \(PJSUA.supportsIPv6 ? "yes" : "no")"), "\(tool.output)")
            #expect(tool.output.contains("compiled against pjproject \(version.compiled)"), "\(tool.output)")
        }
    }

    @Test(
        "A pjproject built without IPv6: an IPv6 transport or RTP address throws a typed error, nothing aborts",
        .enabled(if: !PJSUA.supportsIPv6, "this pjproject has IPv6; `make test PJPROJECT=2.17-noipv6` runs this"))
    func withoutIPv6TypedErrors() async throws {
        let engine = PJSUA()
        await #expect {
            try await engine.start(
                Configuration(transports: [TransportConfiguration(type: .udp6, bindAddress: "::1")], media: nullSound))
        } throws: { ($0 as? PJSUAError)?.code == .addressFamilyNotSupported }
        // Nothing was left running: an IPv4 start works, and an IPv6 RTP address is refused.
        try await engine.start(
            Configuration(transports: loopbackUDP, media: MediaConfiguration(soundDevice: .null, rtpAddress: "::1")))
        await #expect {
            try await engine.addLocalAccount()
        } throws: { ($0 as? PJSUAError)?.code == .addressFamilyNotSupported }
        await engine.shutdown()
        try await engine.start(Configuration(transports: loopbackUDP, media: nullSound))
        let account = try await engine.addLocalAccount()
        let port = try #require(try await engine.transports().first?.port)
        let log = EventLog(engine.events)
        let (caller, _) = try await engine.answeredSelfCall(to: "sip:self@127.0.0.1:\(port)", from: account, log: log)
        try await log.first("media") { $0.hasActiveAudio(caller) }
        await engine.shutdown()
    }
}

/// A pjproject library folder on this machine other than the one this process loaded, with
/// its version (from the pkg-config file beside it): what the mismatch test loads instead.
let otherPJProject: (libdir: String, version: String)? = {
    let loaded = PJSUA.pjprojectVersion.loaded
    var folders = ["/usr/local/lib"]
    if let names = try? FileManager.default.contentsOfDirectory(atPath: "/opt/swift-pjsua") {
        folders += names.sorted().map { "/opt/swift-pjsua/\($0)/lib" }
    }
    for folder in folders {
        guard let pc = try? String(contentsOfFile: "\(folder)/pkgconfig/libpjproject.pc", encoding: .utf8),
            FileManager.default.fileExists(atPath: "\(folder)/libpj.so.2"),
            let line = pc.split(separator: "\n").first(where: { $0.hasPrefix("Version:") })
        else { continue }
        let version = line.dropFirst("Version:".count).trimmingCharacters(in: .whitespaces)
        if version != loaded { return (folder, version) }
    }
    return nil
}()

extension EngineTests {
    @Test(
        "Another pjproject loaded at run time: start refuses with both versions named, the process does not crash",
        .enabled(if: otherPJProject != nil, "no second pjproject version installed here to load instead"))
    func versionMismatchRefused() async throws {
        let other = try #require(otherPJProject)
        let compiled = PJSUA.pjprojectVersion.compiled
        try await withTemporaryFolder { folder in
            // LD_LIBRARY_PATH comes before the tool's RUNPATH: the dynamic linker loads the
            // other version's libpj*.so.2 under the same names.
            for command in [["version"], ["demo"]] {
                let tool = try PeerProcess(
                    "mismatch-\(command[0])", executable: Repository.tool.path, arguments: command, folder: folder,
                    environment: ["LD_LIBRARY_PATH": other.libdir])
                let status = try await tool.waitForExit(timeout: .seconds(20))
                #expect(status == 1, "\(tool.output)")
                let expected =
                    command == ["version"]
                    ? "pjproject \(other.version) loaded\n"
                    : "pjproject \(other.version) is loaded, but the engine was compiled against pjproject \(compiled)"
                #expect(tool.output.contains(expected), "\(tool.output)")
            }
        }
    }
}
