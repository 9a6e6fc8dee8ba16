import SwiftPJSUA
import Testing

@Suite("Message summary bodies (RFC 3842 §5.2)")
struct MessageSummaryTests {
    @Test("The RFC's example: waiting, the account, voice counts with urgent ones, optional headers left in the body")
    func rfcExample() {
        let body = """
            Messages-Waiting: yes\r
            Message-Account: sip:alice@vmail.example.com\r
            Voice-Message: 4/8 (1/2)\r
            \r
            To: <alice@atlanta.example.com>\r
            From: <bob@biloxi.example.com>\r
            """
        let summary = MessageSummary(parsing: body, account: nil, isSolicited: true)
        #expect(summary.messagesWaiting)
        #expect(summary.messageAccount == "sip:alice@vmail.example.com")
        #expect(
            summary.counts == [
                MessageSummary.Counts(messageClass: "voice-message", new: 4, old: 8, urgentNew: 1, urgentOld: 2)
            ])
        #expect(summary.voice?.new == 4)
        #expect(summary.body == body)
        #expect(summary.isSolicited)
    }

    @Test(
        "Count lines: classes, case, spacing, no urgent part; malformed ones skipped",
        arguments: [
            ("Fax-Message: 0/1", [MessageSummary.Counts(messageClass: "fax-message", new: 0, old: 1)]),
            ("voice-message:2/ 3", [MessageSummary.Counts(messageClass: "voice-message", new: 2, old: 3)]),
            (
                "Text-Message: 1/0 ( 0 / 0 )",
                [MessageSummary.Counts(messageClass: "text-message", new: 1, old: 0, urgentNew: 0, urgentOld: 0)]
            ),
            ("Voice-Message: 2", []),
            ("Voice-Message: -1/2", []),
            ("Voice-Message: 1/2 (3)", []),
            ("Voice-Message: a/b", []),
            ("Video-Message: 1/2", []),
        ])
    func countLines(line: String, expected: [MessageSummary.Counts]) {
        let summary = MessageSummary(parsing: "Messages-Waiting: no\n\(line)\n", account: nil, isSolicited: false)
        #expect(summary.counts == expected)
        #expect(!summary.messagesWaiting)
    }

    @Test("A body without Messages-Waiting reads as not waiting; an empty one has no counts")
    func missingLines() {
        #expect(!MessageSummary(parsing: "Voice-Message: 1/0", account: nil, isSolicited: false).messagesWaiting)
        let empty = MessageSummary(parsing: "", account: nil, isSolicited: false)
        #expect(empty.counts.isEmpty && empty.messageAccount == nil && !empty.messagesWaiting)
    }
}
