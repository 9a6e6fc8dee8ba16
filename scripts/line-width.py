#!/usr/bin/env python3
"""Fail on a Swift line wider than the repo's configured width.

    python3 scripts/line-width.py PATH...

`swift format lint` reports only the lines its pretty-printer could have broken: a long
string literal or comment passes it. This check reads `lineLength` from `.swift-format` and
reports every line of a `.swift` file under the given paths that is longer, counted in
characters (as swift-format counts them), generated files excepted. Exits 1 if it found one.
"""

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
width = json.loads((ROOT / ".swift-format").read_text(encoding="utf-8"))["lineLength"]
found = 0
for argument in sys.argv[1:] or ["Sources", "Tests", "Examples", "Package.swift"]:
    path = ROOT / argument
    files = [path] if path.is_file() else sorted(path.rglob("*.swift"))
    for file in files:
        if file.name.endswith(".generated.swift"):
            continue
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if len(line) > width:
                found += 1
                name = file.relative_to(ROOT) if file.is_relative_to(ROOT) else file
                print(f"{name}:{number}: {len(line)} characters, over the width of {width}")
if found:
    print(f"line-width: {found} line(s) over {width} characters (.swift-format's lineLength)")
    sys.exit(1)
print(f"line-width: every line within {width} characters")
