"""Same scenario + same seed = byte-identical event log, whatever PYTHONHASHSEED is."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from scenarios.eventlog import read_jsonl
from scenarios.network import NetworkConfig
from scenarios.simulation import Simulation
from tests.sim.helpers import FAST_BROKER, consumer_settings

ROOT = Path(__file__).resolve().parents[2]


def noisy_scenario(seed: int) -> Simulation:
    """Jitter, message loss, two groups, joins, a crash, a close and a broker failure."""
    sim = Simulation(
        brokers=3,
        topics={"orders": 8, "payments": 4},
        seed=seed,
        coordinator_config=FAST_BROKER,
        network=NetworkConfig(latency_ms=2, jitter_ms=7, drop_probability=0.02),
    )
    sim.add_consumers(3, group_id="g1", topics=["orders"], **consumer_settings("eager"))
    sim.add_consumers(
        3,
        prefix="D",
        group_id="g2",
        topics=["orders", "payments"],
        **consumer_settings("cooperative"),
    )
    sim.start()
    sim.at(5_000, lambda: sim.crash("C2"))
    sim.at(7_000, lambda: sim.close("D1"))
    sim.at(9_000, lambda: sim.fail_broker(sim.coordinator("g2") or "broker-0"))
    sim.at(12_000, lambda: sim.restart("C2"))
    sim.run(until=40_000)
    return sim


def log_bytes(sim: Simulation) -> bytes:
    out = io.StringIO()
    sim.write_log(out)
    return out.getvalue().encode()


def test_same_seed_gives_a_byte_identical_log() -> None:
    first, second = noisy_scenario(11), noisy_scenario(11)
    assert len(first.events) > 1_000
    assert log_bytes(first) == log_bytes(second)
    assert log_bytes(noisy_scenario(12)) != log_bytes(first)


def test_log_lines_are_sorted_json_with_a_gapless_seq(tmp_path: Path) -> None:
    sim = noisy_scenario(3)
    path = tmp_path / "events.jsonl"
    sim.write_log(path)
    lines = path.read_text().splitlines()
    assert len(lines) == len(sim.events)
    for line in lines[:50]:
        keys = list(json.loads(line))
        assert keys == sorted(keys)
    events = read_jsonl(path)
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert all(isinstance(e["t_ms"], int) for e in events)
    assert [e["t_ms"] for e in events] == sorted(e["t_ms"] for e in events)


def test_log_does_not_depend_on_the_hash_seed() -> None:
    script = (
        "import hashlib, io, sys\n"
        "from tests.sim.test_determinism import noisy_scenario, log_bytes\n"
        "print(hashlib.sha256(log_bytes(noisy_scenario(11))).hexdigest())\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "4242"}
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    here = hashlib.sha256(log_bytes(noisy_scenario(11))).hexdigest()
    assert result.stdout.strip() == here


def test_history_from_a_written_log_equals_the_live_one(tmp_path: Path) -> None:
    """The Spark pipeline and the CLI read logs back from files: same records as in memory."""
    from scenarios.history import rebalances_from_events

    sim = noisy_scenario(5)
    path = tmp_path / "events.jsonl"
    sim.write_log(path)
    live = rebalances_from_events(sim.events)
    assert len(live) >= 4
    assert rebalances_from_events(read_jsonl(path)) == live
