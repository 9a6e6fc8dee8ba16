import Foundation
import PJSUATestSupport
import Testing

@Suite("Kit core purity")
struct PurityTests {
    @Test("The Kit's sources import no C module and use no unsafe API or pointers")
    func noCNoUnsafe() throws {
        let folder = Repository.root.appendingPathComponent("Sources/SwiftPJSUAKit")
        let files = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }
            .filter { $0.pathExtension == "swift" }
        #expect(files.count >= 6)
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for banned in ["import CPJSIP", "Unsafe", "unsafe", "Pointer", "@unchecked", "unowned("] {
                #expect(!text.contains(banned), "\(file.lastPathComponent) contains \(banned)")
            }
        }
    }
}
