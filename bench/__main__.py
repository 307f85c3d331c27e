"""Run every benchmark module (`bench_*.py`; `bench_capacity`, computed from the others' results, last), or
those named on the command line."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path

from bench import common


def main(argv: list[str]) -> int:
    names = sorted(
        (m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if m.name.startswith("bench_")),
        key=lambda name: (name == "bench_capacity", name),  # last: it computes from the others' results
    )
    if {"-h", "--help"} & set(argv):
        print(
            f"usage: python -m bench [NAME ...]  (every benchmark when none is named)\nknown: {', '.join(names)}"
        )
        return 0
    given = [a for a in argv if not a.startswith("-")]  # flags (`capacity --write`) are the modules' own
    wanted = [n if n.startswith("bench_") else f"bench_{n}" for n in given] or names
    unknown = [n for n in wanted if n not in names]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(names)}", file=sys.stderr)
        return 2
    failures = 0
    for name in wanted:
        print(f"\n=== {name} ===", flush=True)
        started = time.perf_counter()
        module = importlib.import_module(f"bench.{name}")
        common.mark_start()
        status = module.main()
        failures += bool(status)
        print(f"({name}: {time.perf_counter() - started:.1f}s)", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
