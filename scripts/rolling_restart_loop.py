"""The loop of ``bench/simulation.py``'s rolling restart, alone, for counting or timing it in any
tree, including the code before the reshape.

``python scripts/rolling_restart_loop.py GROUPS loop`` joins GROUPS groups of 10 consumers, then
restarts every consumer once; ``... GROUPS setup`` stops after the first join. The difference of
the two is the loop's cost, without imports. Run it from the tree to measure, e.g.
``PYTHONPATH=. valgrind --tool=callgrind python /path/to/rolling_restart_loop.py 30 loop``
(docs/runner.md, "Counted instead of timed"). The groups and the loop are this checkout's
``bench/simulation.py`` (``restart_groups``, ``restart_each_member``), loaded by its path, so the
tree on ``PYTHONPATH`` supplies only the code they run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "simulation.py"


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[0].isdigit() or argv[1] not in ("loop", "setup"):
        print("usage: rolling_restart_loop.py GROUPS loop|setup", file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location("rolling_restart_bench", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    sim, group_ids, settled = bench.restart_groups(int(argv[0]))
    if argv[1] == "loop":
        settled = bench.restart_each_member(sim, group_ids, settled)
    print(len(sim.events), "stable" if settled else f"NOT stable: {settled!r}")
    return 0 if settled else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
