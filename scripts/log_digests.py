"""Digests of the event logs of many runs: the oracle for changes that must not change behaviour.

A performance change to the runner, the consumers or the coordinator must leave every event log
byte-identical. This runs every library lesson, seeded noisy simulations (jitter, loss, crashes,
broker failure; eager, cooperative and static members) and the quick benchmark workloads, and
prints one SHA-256 per run of its JSON-lines log.

    python scripts/log_digests.py > before.json      # on the old code
    python scripts/log_digests.py --check before.json  # on the new code: lists every difference
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from coordinator.config import CoordinatorConfig  # noqa: E402
from scenarios.eventlog import write_jsonl  # noqa: E402
from scenarios.loader import library_scenarios, load_scenario  # noqa: E402
from scenarios.network import NetworkConfig  # noqa: E402
from scenarios.runner import run_scenario  # noqa: E402
from scenarios.simulation import Simulation  # noqa: E402

FAST = CoordinatorConfig(group_initial_rebalance_delay_ms=0)


def digest(events: object) -> str:
    out = io.StringIO()
    write_jsonl(events, out)  # type: ignore[arg-type]
    return hashlib.sha256(out.getvalue().encode()).hexdigest()


def noisy(seed: int, protocol: str, static: bool) -> Simulation:
    """Two groups on a lossy, jittery network; crashes, a close, a broker failure, a restart."""
    strategy = ["cooperative-sticky"] if protocol == "cooperative" else ["range", "roundrobin"]
    sim = Simulation(
        brokers=3,
        topics={"orders": 8, "payments": 4},
        seed=seed,
        coordinator_config=FAST,
        network=NetworkConfig(latency_ms=2, jitter_ms=7, drop_probability=0.02),
    )
    extra = {"group_instance_id": "inst-{}"} if static else {}
    common = {"session_timeout_ms": 6_000, "heartbeat_interval_ms": 1_000}
    sim.add_consumers(
        3,
        group_id="g1",
        topics=["orders"],
        partition_assignment_strategy=strategy,
        **common,
        **extra,
    )
    sim.add_consumers(
        3,
        prefix="D",
        group_id="g2",
        topics=["orders", "payments"],
        partition_assignment_strategy=["sticky"],
        **common,
    )
    sim.start()
    sim.at(5_000, lambda: sim.crash("C2"))
    sim.at(7_000, lambda: sim.close("D1"))
    sim.at(9_000, lambda: sim.fail_broker(sim.coordinator("g2") or "broker-0"))
    sim.at(12_000, lambda: sim.restart("C2"))
    sim.at(15_000, lambda: sim.start("D1"))
    sim.at(18_000, lambda: sim.add_partitions("orders", 12))
    sim.at(20_000, lambda: sim.restart_broker("broker-0"))
    sim.run(until=40_000)
    return sim


def rolling(groups: int, protocol: str, static: bool) -> Simulation:
    strategy = ["cooperative-sticky"] if protocol == "cooperative" else ["range"]
    sim = Simulation(
        brokers=3, topics={f"t{i}": 12 for i in range(3)}, seed=7, coordinator_config=FAST
    )
    ids = [f"g{g}" for g in range(groups)]
    extra = {"group_instance_id": "i-{}"} if static else {}
    for g, gid in enumerate(ids):
        sim.add_consumers(
            4,
            prefix=f"{gid}-c",
            group_id=gid,
            topics=[f"t{g % 3}"],
            partition_assignment_strategy=strategy,
            **extra,
        )
    sim.start()
    sim.run_until_stable(ids, timeout_ms=300_000)
    for k in range(1, 5):
        names = [f"{gid}-c{k}" for gid in ids]
        for cid in names:
            sim.close(cid) if not static else sim.crash(cid)
        sim.run_for(2_000)
        sim.start(names)
        sim.run_until_stable(ids, timeout_ms=300_000)
    sim.run_for(20_000)
    return sim


def runs() -> Iterator[tuple[str, Callable[[], object]]]:
    for path in library_scenarios():
        yield f"lesson/{path.stem}", lambda p=path: run_scenario(load_scenario(p)).events
    for seed in range(1, 7):
        for protocol in ("eager", "cooperative"):
            for static in (False, True):
                name = f"noisy/{seed}/{protocol}/{'static' if static else 'dynamic'}"
                yield name, lambda s=seed, p=protocol, st=static: noisy(s, p, st).events
    for protocol in ("eager", "cooperative"):
        for static in (False, True):
            name = f"rolling/{protocol}/{'static' if static else 'dynamic'}"
            yield name, lambda p=protocol, st=static: rolling(12, p, st).events
    from bench.simulation import cold_join, rolling_restart  # noqa: F401  (the bench's own runs)

    yield "bench/rolling-restart-quick", _bench_rolling


def _bench_rolling() -> object:
    import bench.simulation as bench

    captured: list[Simulation] = []
    original = bench.Simulation

    def capture(*args: object, **kwargs: object) -> Simulation:
        sim = original(*args, **kwargs)  # type: ignore[arg-type]
        captured.append(sim)
        return sim

    bench.Simulation = capture  # type: ignore[assignment,misc]
    try:
        bench.rolling_restart(30)
    finally:
        bench.Simulation = original  # type: ignore[misc]
    return captured[0].events


def main(argv: list[str]) -> int:
    digests = {}
    for name, run in runs():
        digests[name] = digest(run())
        print(f"{name}: {digests[name][:16]}", file=sys.stderr, flush=True)
    if argv[:1] == ["--check"]:
        expected = json.loads(Path(argv[1]).read_text())
        changed = sorted(
            n for n in expected.keys() | digests.keys() if expected.get(n) != digests.get(n)
        )
        for name in changed:
            print(f"CHANGED {name}")
        print(f"{len(digests) - len(changed)} of {len(digests)} logs identical")
        return 1 if changed else 0
    print(json.dumps(digests, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
