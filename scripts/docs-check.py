#!/usr/bin/env python3
"""Check the library targets' documentation, offline: every public symbol has a doc comment,
and DocC builds each catalog with no warning (no unresolved symbol link, no undocumented
parameter, no unknown directive).

    python3 scripts/docs-check.py SCRATCH MODULE...

`make docs-check` runs it after `swift package dump-symbol-graph --minimum-access-level
public`, which writes SCRATCH/<triple>/symbolgraph/ from the modules `make build` already
compiled (no second build), its output in SCRATCH/docs/dump-symbol-graph.log. Per module it:

1. reads MODULE.symbols.json and MODULE@*.symbols.json (its extensions of other modules'
   types) and reports every public or open symbol declared in Sources/ whose doc comment is
   missing or empty. What counts: every symbol with a source location, including a member
   that implements a protocol requirement (`description`, `==`, `hash(into:)`, `next()`) —
   declared in our code, it says what our implementation does (the format of a description,
   what equality means), so a doc inherited from the protocol is not enough. What the
   compiler synthesizes (`hashValue`, `init(rawValue:)`, default implementations of other
   modules' protocols) has no source location and is not counted.
2. runs `docc convert Sources/MODULE/MODULE.docc --warnings-as-errors` over those symbol
   graphs into SCRATCH/docs/MODULE.doccarchive (the built documentation, kept).

Exits 1 if either step found something. Python 3 standard library only.
"""

import glob
import json
import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCC = os.environ.get("DOCC") or shutil.which("docc") or "/opt/swift/usr/bin/docc"


def symbol_graph_dir(scratch):
    dirs = sorted(glob.glob(os.path.join(scratch, "*", "symbolgraph")))
    if not dirs:
        no_graph(scratch, f"no symbol graphs under {scratch}/*/symbolgraph")
    return pathlib.Path(dirs[0])


def no_graph(scratch, what):
    """Stop with dump-symbol-graph's log, which says why a graph is missing."""
    log = pathlib.Path(scratch) / "docs" / "dump-symbol-graph.log"
    if log.exists():
        sys.stdout.write(log.read_text(encoding="utf-8", errors="replace")[-20000:])
    sys.exit(f"docs-check: {what} (swift package dump-symbol-graph failed?)")


def graphs(directory, module):
    return [directory / f"{module}.symbols.json"] + sorted(directory.glob(f"{module}@*.symbols.json"))


def undocumented(files, module):
    """(path, line, description) of each declared public symbol without its own doc comment."""
    sources = (ROOT / "Sources").as_uri() + "/"
    found = []
    for path in files:
        graph = json.loads(path.read_text(encoding="utf-8"))
        for symbol in graph["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            location = symbol.get("location")
            if not location or not location["uri"].startswith(sources):
                continue  # synthesized, or declared outside this package's sources
            if "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
                continue
            comment = symbol.get("docComment") or {}
            own = comment.get("module", module) == module and any(
                line.get("text", "").strip() for line in comment.get("lines", []))
            if own:
                continue
            file = location["uri"][len((ROOT).as_uri()) + 1:]
            line = location["position"]["line"] + 1
            kind = symbol["kind"]["displayName"].lower()
            name = ".".join(symbol["pathComponents"])
            inherited = f" (only the doc of {comment['module']}'s requirement)" if comment else ""
            found.append((file, line, f"public {kind} {name} has no doc comment{inherited}"))
    return sorted(set(found))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    scratch, modules = sys.argv[1], sys.argv[2:]
    directory = symbol_graph_dir(scratch)
    failed = False
    for module in modules:
        files = graphs(directory, module)
        if not files[0].exists():
            no_graph(scratch, f"{files[0]} is missing")
        missing = undocumented(files, module)
        for file, line, message in missing:
            print(f"{file}:{line}: error: {message}")
        # docc reads every graph in the folder it is given: only this module's.
        staging = pathlib.Path(scratch) / "docs" / f"{module}.symbolgraphs"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for file in files:
            shutil.copy(file, staging)
        archive = pathlib.Path(scratch) / "docs" / f"{module}.doccarchive"
        result = subprocess.run(
            [DOCC, "convert", str(ROOT / "Sources" / module / f"{module}.docc"),
             "--additional-symbol-graph-dir", str(staging), "--output-dir", str(archive),
             "--warnings-as-errors"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            sys.stdout.write(result.stdout)  # docc writes its diagnostics there
        status = "ok" if not missing and result.returncode == 0 else "FAILED"
        print(f"docs-check {module}: {len(missing)} undocumented public symbols, "
              f"docc {'ok' if result.returncode == 0 else 'failed (warnings above)'}: {status}")
        failed = failed or status != "ok"
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
