// The README's and the DocC articles' ```swift blocks are compiled in this target, as
// functions nobody calls: scripts/doc-snippets.py writes them into
// Snippets.generated.swift (not checked in) before every `make build` and `make test`.
// A plain `swift build` on a fresh clone compiles this file alone.

/// A value of any type, for a snippet's hidden setup lines that stand for what a real
/// program would have at hand (`let call: Call = placeholder()`). Snippets are compiled,
/// never run: reaching this is a bug in the test target.
func placeholder<T>(_ type: T.Type = T.self) -> T {
    fatalError("doc snippets are compiled, not run")
}
