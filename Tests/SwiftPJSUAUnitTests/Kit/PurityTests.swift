import Foundation
import PJSUATestSupport
import Testing

@Suite("Kit core purity")
struct PurityTests {
    @Test(
        """
        The Kit's sources import no C module and use no unsafe API or pointers; @unchecked only in the Apple adapters, \
        each with its Safety comment
        """
    )
    func noCNoUnsafe() throws {
        let folder = Repository.root.appendingPathComponent("Sources/SwiftPJSUAKit")
        let files = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }
            .filter { $0.pathExtension == "swift" }
        #expect(files.count >= 6)
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for banned in ["import CPJSIP", "import CPJSUAShim", "Unsafe", "unsafe", "Pointer", "unowned("] {
                #expect(!text.contains(banned), "\(file.lastPathComponent) contains \(banned)")
            }
            // `@unchecked Sendable` only in the Apple adapters, which hold SDK objects the SDK
            // does not mark Sendable, and each with a `// Safety:` comment just above it.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() where line.contains("@unchecked") {
                let isAdapter = file.deletingLastPathComponent().lastPathComponent == "Apple"
                #expect(isAdapter, "\(file.lastPathComponent):\(index + 1) uses @unchecked outside the Apple adapters")
                let above = lines[max(0, index - 12)..<index]
                #expect(
                    above.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix("// Safety:") },
                    "\(file.lastPathComponent):\(index + 1) uses @unchecked without a // Safety: comment above it")
            }
        }
    }

    @Test(
        "The shipped doubles and the Kit's fake-engine suites never create an engine or touch C, so they start no pjsua"
    )
    func doublesStartNoEngine() throws {
        let folders = ["Sources/SwiftPJSUAKitTesting", "Tests/SwiftPJSUAUnitTests/Kit"]
        var checked = 0
        for folder in folders {
            let url = Repository.root.appendingPathComponent(folder)
            let files = try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "swift" && $0.lastPathComponent != "PurityTests.swift" }
            for file in files {
                checked += 1
                let text = try String(contentsOf: file, encoding: .utf8)
                for banned in ["import CPJSIP", "import CPJSUAShim", "PJSUA(", "EngineHarness", "PJSUAEngine("] {
                    #expect(!text.contains(banned), "\(folder)/\(file.lastPathComponent) contains \(banned)")
                }
            }
        }
        #expect(checked >= 12, "\(checked) files")
    }
}
