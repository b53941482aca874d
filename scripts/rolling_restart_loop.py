"""The loop of ``bench/simulation.py``'s rolling restart, alone, for counting or timing it in any
tree, including the code before the reshape (it uses only ``Simulation``'s public calls).

``python scripts/rolling_restart_loop.py GROUPS loop`` joins GROUPS groups of 10 consumers, then
restarts every consumer once; ``... GROUPS setup`` stops after the first join. The difference of
the two is the loop's cost, without imports. Run it from the tree to measure, e.g.
``PYTHONPATH=. valgrind --tool=callgrind python /path/to/rolling_restart_loop.py 30 loop``
(docs/runner.md, "Counted instead of timed").
"""

from __future__ import annotations

import sys

from coordinator.config import CoordinatorConfig
from scenarios.simulation import Simulation

MEMBERS = 10


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[0].isdigit() or argv[1] not in ("loop", "setup"):
        print("usage: rolling_restart_loop.py GROUPS loop|setup", file=sys.stderr)
        return 2
    groups = int(argv[0])
    sim = Simulation(
        log_level="debug",
        brokers=3,
        topics={f"topic-{i}": 20 for i in range(10)},
        seed=1,
        coordinator_config=CoordinatorConfig(group_initial_rebalance_delay_ms=0),
    )
    group_ids = [f"group-{g}" for g in range(groups)]
    for g, group_id in enumerate(group_ids):
        sim.add_consumers(
            MEMBERS, prefix=f"{group_id}-c", group_id=group_id, topics=[f"topic-{g % 10}"]
        )
    sim.start()
    stable = bool(sim.run_until_stable(group_ids, timeout_ms=300_000))
    if argv[1] == "loop":
        for k in range(1, MEMBERS + 1):
            restarted = [f"{group_id}-c{k}" for group_id in group_ids]
            for consumer_id in restarted:
                sim.close(consumer_id)
            sim.run_for(2000)
            sim.start(restarted)
            stable = bool(sim.run_until_stable(group_ids, timeout_ms=300_000)) and stable
    print(len(sim.events), "stable" if stable else "NOT stable")
    return 0 if stable else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
