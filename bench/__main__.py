"""Run every benchmark suite, or the ones named: ``python -m bench [assignors simulation pipeline]``.

Each suite is a module ``bench/<name>.py`` with ``main(argv: list[str]) -> int``.
"""

from __future__ import annotations

import importlib
import sys

SUITES = (
    "assignors",
    "server_assignors",
    "target_assignment",
    "coordinator",
    "simulation",
    "pipeline",
)


def main(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        print(__doc__.strip())
        print(
            "\nSuites: " + ", ".join(SUITES) + ". Flags (--quick, --cap=60, ...) go to every suite."
        )
        return 0
    names = [a for a in argv if not a.startswith("-")] or list(SUITES)
    flags = [a for a in argv if a.startswith("-")]
    status = 0
    for name in names:
        if name not in SUITES:
            print(f"unknown bench suite {name!r}; choose from {', '.join(SUITES)}", file=sys.stderr)
            return 2
        try:
            module = importlib.import_module(f"bench.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"bench.{name}":
                print(f"[bench] suite {name!r} is not written yet; skipped")
                continue
            raise
        print(f"\n=== bench: {name} ===", flush=True)
        status |= module.main(flags)
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
