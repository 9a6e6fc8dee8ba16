#!/usr/bin/env python3
"""Write every ```swift block of the README, the DocC articles and the libraries' `///`
comments (all of which DocC renders) into one Swift file that
the DocSnippetTests target compiles (and never runs), so a block that stops compiling fails
`make test`.

    python3 scripts/doc-snippets.py    # writes Tests/DocSnippetTests/Snippets.generated.swift

Each block becomes the body of an `async throws` function nobody calls; a block that
declares a type, protocol or extension at its top level (an unindented line) is emitted at file level
instead. `import` lines (of the block or its setup) are moved to the top of the file, under
the block's `snippet-if` condition if it has one. The generated file carries
`#sourceLocation` lines, so the compiler's errors name the Markdown file and line.

Conventions in the Markdown (in a doc comment, the same lines after `///`), for what a
reader should not have to see:
- A fence other than ```swift (```sh, ```json, a bare ```) is not compiled: shell, output,
  pseudo-code.
- An HTML comment right before the fence (blank lines between are allowed) gives hidden
  setup lines, prepended to the block; `placeholder()` (DocSnippetSupport.swift) stands for
  a value the reader's program would have:

      <!-- snippet-setup:
      let engine = PJSUA()
      let call: Call = placeholder()
      -->

  No setup line may start with `@`: DocC reads such a line as a directive even inside an
  HTML comment (write `import CallKit`, not `@preconcurrency import CallKit`).
- `<!-- snippet-if: canImport(CallKit) -->` compiles the block only where the condition
  holds (`#if`), for Apple-only code; on Linux such a block is not compiled.

Python 3 standard library only; the file is rewritten only when its text changes, so an
unchanged README costs no rebuild.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "Tests/DocSnippetTests/Snippets.generated.swift"
# Imported by every snippet: the fragments in articles assume their module.
DEFAULT_IMPORTS = ["import Foundation", "import SwiftPJSUA", "import SwiftPJSUAKit"]

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
COMMENT = re.compile(r"<!--\s*snippet-(setup|if)\s*:(.*?)-->", re.S)
# A line at a block's top level that only makes sense at file level.
DECLARATION = re.compile(
    r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|internal|fileprivate|private|final|open)\s+)*"
    r"(?:struct|class|enum|protocol|extension|actor|typealias)\b"
)


# The libraries whose doc comments DocC renders.
LIBRARIES = ["SwiftPJSUA", "SwiftPJSUAKit"]
DOC_COMMENT = re.compile(r"^\s*/// ?(.*)$")


def sources():
    files = [ROOT / "README.md"]
    files += sorted(ROOT.glob("Sources/*/*.docc/**/*.md"))
    files += sorted(ROOT.glob("docs/*.md"))
    for library in LIBRARIES:
        files += sorted((ROOT / "Sources" / library).glob("**/*.swift"))
    return [f for f in files if f.is_file()]


def markdown_lines(path):
    """The file's lines as Markdown: a Swift file's `///` comments, with every other line
    blanked out to a line no fence matches (so a block never spans two comments)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    if path.suffix != ".swift":
        return lines
    out = []
    for line in lines:
        match = DOC_COMMENT.match(line)
        out.append(match.group(1) if match else "\x00")
    return out


def blocks(path):
    """Yield (first code line number, code lines, setup lines, condition) per swift block."""
    lines = markdown_lines(path)
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, language = match.groups()
        end = i + 1
        while end < len(lines) and lines[end] != "\x00" and not lines[end].strip().startswith(fence):
            end += 1
        if language == "swift":
            setup, condition = comments_before(lines, i)
            code = [line[len(indent):] if line.startswith(indent) else line for line in lines[i + 1:end]]
            yield i + 2, code, setup, condition
        i = end + 1


def comments_before(lines, fence_index):
    """The snippet-setup and snippet-if comments right above a fence."""
    j = fence_index - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    setup, condition = [], None
    # Walk back over consecutive HTML comments ending right above the fence.
    while j >= 0 and lines[j].rstrip().endswith("-->"):
        start = j
        while start >= 0 and "<!--" not in lines[start]:
            start -= 1
        if start < 0:
            break
        text = "\n".join(lines[start:j + 1])
        match = COMMENT.search(text)
        if not match:
            break
        kind, body = match.group(1), match.group(2)
        if kind == "setup":
            # (1-based line number, text) of each setup line, for #sourceLocation.
            first = start + 1 + text[:match.start(2)].count("\n")
            setup = [
                (first + k, line) for k, line in enumerate(body.split("\n")) if line.strip()
            ] + setup
        else:
            condition = body.strip()
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
    return setup, condition


def add_import(imports, condition, line):
    """Hoist an `import` line to the file's top (under the block's condition); False if the
    line is no import."""
    stripped = line.strip()
    if not re.match(r"^(@\w+\s+)?import\s+\w+$", stripped):
        return False
    if stripped not in imports and (condition, stripped) not in imports:
        imports.append((condition, stripped) if condition else stripped)
    return True


def render():
    imports = list(DEFAULT_IMPORTS)
    out = []
    count = 0
    for path in sources():
        relative = path.relative_to(ROOT).as_posix()
        for line_number, code, setup, condition in blocks(path):
            count += 1
            body = []
            for line in code:
                if add_import(imports, condition, line):
                    body.append("")  # keep the line numbers
                else:
                    body.append(line)
            setup = [(n, line) for n, line in setup if not add_import(imports, condition, line)]
            file_level = any(DECLARATION.match(line) for line in body)
            name = "snippet_" + re.sub(r"\W", "_", relative) + f"_{line_number}"
            out.append("")
            if condition:
                out.append(f"#if {condition}")
            if not file_level:
                out.append(f"private func {name}() async throws {{")
            for setup_line, line in setup:
                out.append(f'#sourceLocation(file: "{relative}", line: {setup_line})')
                out.append(line)
            out.append(f'#sourceLocation(file: "{relative}", line: {line_number})')
            out.extend(body)
            out.append("#sourceLocation()")
            if not file_level:
                out.append("}")
            if condition:
                out.append("#endif")
    header = [
        "// swift-format-ignore-file",
        "// Generated by scripts/doc-snippets.py from the README, the DocC articles and the",
        "// libraries' doc comments: do not edit. Every function here is compiled, never called.",
        "",
    ]
    for entry in imports:
        header += [entry] if isinstance(entry, str) else [f"#if {entry[0]}", entry[1], "#endif"]
    return "\n".join(header + out) + "\n", count


def main():
    text, count = render()
    current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else None
    if current != text:
        OUTPUT.write_text(text, encoding="utf-8")
        print(f"doc snippets: {count} swift blocks written to {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
