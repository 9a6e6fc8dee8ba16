import Foundation
import KitTestSupport
import PJSUATestSupport
import SwiftPJSUA
import SwiftPJSUAKit
import Testing

extension EngineTests.KitOrderings {
    @Test(
        """
        Kit on the real engine: a call replaced by an INVITE with Replaces keeps its UUID and is updated, not rung \
        anew
        """
    )
    func replacedCallKeepsUUID() async throws {
        try await Rig.run { rig in
            let peer = try RawSIPPeer()
            defer { peer.close() }
            let port = rig.h.transport.port
            let first = EngineTests.replacesInvite(
                callID: "kit-replaced-\(UUID().uuidString)", fromTag: "alice-1", peer: peer)
            try peer.send(bytes: peer.request(first, to: port), to: port)
            let old = try await rig.waitForRinging()
            let id = CallIdentity.uuid(sipCallID: first.callID)
            try await rig.provider.wait("the first call reported") {
                if case .newIncomingCall(let reported, _) = $0 { reported == id } else { false }
            }
            let answer = CallAction(callUUID: id, kind: .answer)
            await rig.router.perform(answer)
            let answered = try #require(try await peer.response(callID: first.callID, timeout: .seconds(10)))
            #expect(answered.statusCode == 200)
            try peer.send(bytes: peer.request(EngineTests.replacesAck(first, answered), to: port), to: port)
            try await rig.expect(.fulfilled(answer.id))

            var second = EngineTests.replacesInvite(
                callID: "kit-replacement-\(UUID().uuidString)", fromTag: "carol-2", peer: peer,
                headers: ["Replaces: \(first.callID);to-tag=\(answered.toTag ?? "");from-tag=alice-1"])
            second.fromAddress = "\"Carol\" <sip:carol@127.0.0.1>"
            let replaced = try await EngineTests.sendReplacesInvite(second, from: peer, to: port)
            #expect(replaced.statusCode == 200, "\(replaced)")
            if let bye = await peer.receivedRequest("BYE", callID: first.callID, timeout: .seconds(10)) {
                try peer.respond(200, "OK", to: bye)
            } else {
                Issue.record("no BYE for the replaced call\n\(rig.diagnostics)")
            }
            try await rig.expect(.updated(id, CallUpdate(remoteURI: "sip:carol@127.0.0.1", displayName: "Carol")))
            try await rig.h.log.first("the replaced call ended") { $0.isState(.disconnected, of: old) }
            let new = try #require(await rig.router.calls.first?.call)
            #expect(new != old)
            try await rig.h.log.first("the replacement confirmed") { $0.isState(.confirmed, of: new) }
            #expect(rig.provider.reportedCalls == [id])
            #expect(!rig.provider.records.contains { if case .ended = $0 { true } else { false } })
            #expect(!rig.engine.records.contains(.answer(new, 180)), "\(rig.engine.records)")

            // Ending the call from the call UI hangs up the replacement.
            let end = CallAction(callUUID: id, kind: .end)
            await rig.router.perform(end)
            if let bye = await peer.receivedRequest("BYE", callID: second.callID, timeout: .seconds(10)) {
                try peer.respond(200, "OK", to: bye)
            } else {
                Issue.record("no BYE for the replacement\n\(rig.diagnostics)")
            }
            try await rig.expect(.fulfilled(end.id))
            #expect(await rig.router.calls.isEmpty)
        }
    }
}
