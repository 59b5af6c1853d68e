"""Snapshot what the converter writes for the whole zoo, and compare two snapshots byte for byte.

    python tools/program_snapshot.py write DIR [--memory auto,dram,l1] [--full] [--weights FORMAT] [NAME ...]
    python tools/program_snapshot.py compare BEFORE_DIR AFTER_DIR

`write` converts every CI zoo model (both exporters where the zoo has both; `--full` for the published
sizes) under each memory policy asked for, and stores in DIR the generated program of each (as
`<case>.py`) and `manifest.json`: case -> sha256 of the program and of its weights sidecar (the .npz as
`convert` writes it). A model that fails to convert is recorded with its error, so a refactor that breaks a
conversion shows up too.

`compare` prints every case whose program or weights differ (with a unified diff of the programs), every
case present on one side only, and exits 1 if there is any difference, 0 when both snapshots are
byte-identical. A refactor that must not change behaviour is checked by writing a snapshot on the commit
before it and one after it, then comparing:

    git stash; python tools/program_snapshot.py write /tmp/before; git stash pop
    python tools/program_snapshot.py write /tmp/after
    python tools/program_snapshot.py compare /tmp/before /tmp/after

The zoo exports come from the cache models/export.py keeps (built on first use, offline). Programs are
converted as if written next to their model, so the text does not depend on where the checkout, the cache
or DIR are: snapshots written from two worktrees into two folders compare equal.
"""
from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:  # after PYTHONPATH: PYTHONPATH=<other checkout> snapshots that checkout
    sys.path.append(REPO)

POLICIES = ("auto", "dram", "l1")


def _cases(full: bool, names: list[str]):
    from models import zoo

    for entry in zoo.selected(full=full, names=names or None):
        exporters = entry.exporters if entry.kind == "transformers" else ("-",)
        for exporter in exporters:
            yield entry, exporter, f"{entry.name}-{exporter}" if exporter != "-" else entry.name


def _sha256(data) -> str:
    return hashlib.sha256(data if isinstance(data, bytes) else data.encode()).hexdigest()


def write(folder: str, policies: list[str], full: bool, names: list[str], options: dict = None) -> int:
    import onnx2ttnn
    from models import export
    from onnx2ttnn.emit.weights import npz_bytes

    os.makedirs(folder, exist_ok=True)
    manifest = {}
    size = "full" if full else "reduced"
    for entry, exporter, case in _cases(full, names):
        path = export.export(entry, size if entry.kind == "transformers" else "reduced",
                             exporter if exporter != "-" else "dynamo", log=lambda line: None)
        for memory in policies:
            key = f"{case}@{memory}"
            start = time.perf_counter()
            try:
                # the program names its source model relative to its own folder: named as if written next to
                # the model, it says `<model>.onnx` whichever checkout, cache or snapshot folder is used
                conversion = onnx2ttnn.convert(path, os.path.join(os.path.dirname(path), f"{case}_ttnn.py"),
                                               memory=memory, **(options or {}))
            except Exception as error:  # recorded, not raised: a snapshot shows every case
                manifest[key] = {"error": f"{type(error).__name__}: {error}"}
                print(f"{key:48} ERROR {type(error).__name__}: {error}", flush=True)
                continue
            source = conversion.source
            with open(os.path.join(folder, f"{key}.py"), "w", encoding="utf-8") as handle:
                handle.write(source)
            manifest[key] = {"program": _sha256(source), "weights": _sha256(npz_bytes(conversion.program.weights))}
            print(f"{key:48} {time.perf_counter() - start:6.2f} s", flush=True)
    with open(os.path.join(folder, "manifest.json"), "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=1, sort_keys=True)
    print(f"{len(manifest)} cases written to {folder}")
    return 0


def compare(before: str, after: str) -> int:
    def load(folder):
        with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as handle:
            return json.load(handle)

    old, new = load(before), load(after)
    common = sorted(set(old) & set(new))
    one_side = sorted(set(old) ^ set(new))
    differ = [key for key in common if old[key] != new[key]]
    for key in one_side:
        print(f"{key}: only in {before if key in old else after}")
    for key in differ:
        parts = [part for part in ("program", "weights", "error") if old[key].get(part) != new[key].get(part)]
        print(f"{key}: {', '.join(parts)} differ")
        if "error" in parts:
            print(f"  before: {old[key].get('error', 'converts')}\n  after:  {new[key].get('error', 'converts')}")
        if "program" in parts and "error" not in parts:
            texts = []
            for folder in (before, after):
                with open(os.path.join(folder, f"{key}.py"), encoding="utf-8") as handle:
                    texts.append(handle.read().splitlines(keepends=True))
            sys.stdout.writelines(list(difflib.unified_diff(*texts, f"{before}/{key}.py", f"{after}/{key}.py"))[:80])
    print(f"{len(common) - len(differ)} identical, {len(differ)} differ, {len(one_side)} in one snapshot only")
    return 1 if differ or one_side else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="convert the zoo and store programs and hashes in DIR")
    w.add_argument("folder")
    w.add_argument("--memory", default=",".join(POLICIES), help="comma-separated policies (default: all)")
    w.add_argument("--full", action="store_true", help="the published sizes instead of the CI ones")
    w.add_argument("--weights", help="the --weights format to convert with (default: the converter's)")
    w.add_argument("names", nargs="*", help="zoo entries (default: every CI entry)")
    c = sub.add_parser("compare", help="compare two snapshot folders")
    c.add_argument("before")
    c.add_argument("after")
    args = parser.parse_args(argv)
    if args.command == "write":
        policies = [p for p in args.memory.split(",") if p]
        unknown = [p for p in policies if p not in POLICIES]
        if unknown:
            parser.error(f"unknown memory policy {unknown[0]!r}; choose from {', '.join(POLICIES)}")
        options = {"weights": args.weights} if args.weights else {}
        return write(args.folder, policies, args.full, args.names, options)
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
