"""The runs table's one unowned column: the run result's unowned partition-milliseconds."""

from __future__ import annotations

from pipeline.runrow import RUN_COLUMNS, RowTask, run_row
from scenarios.loader import library_path, load_scenario
from scenarios.runner import run_scenario
from tests.scenarios.test_defaults import STATIC_CLOSE

ROW = {"scenario_id": 0, "point": 0, "variant": "base", "seed": 0, "params": {}, "overrides": "{}"}


def test_one_unowned_column_in_partition_ms() -> None:
    assert "unowned_partition_ms" in RUN_COLUMNS
    assert "unowned_partition_seconds" not in RUN_COLUMNS
    run, _ = run_row(RowTask(STATIC_CLOSE, "static-close.yaml"), ROW)
    assert run["error"] is None
    (group,) = run_scenario(load_scenario(STATIC_CLOSE), seed=0).groups
    assert run["unowned_partition_ms"] == group.unowned_partition_ms
    assert 10_000 <= run["unowned_partition_ms"] < 10_100  # C0 closed (static) for 5 s, 2 parts
    assert run["paused_partition_seconds"] == 0.0  # none of it inside a rebalance


def test_zookeeper_design_rows_use_the_same_definition() -> None:
    """Seed 004's ZooKeeper consumers: ownership from zk_rebalance_done to release/close/crash."""
    path = library_path() / "seed004-design1-join-leave-crash.yaml"
    text = path.read_text(encoding="utf-8")
    run, _ = run_row(RowTask(text, str(path)), ROW)
    assert run["error"] is None and run["design"] == "zookeeper"
    # the crash of C3 at 60 s leaves its 4 partitions unowned until the others' rebalance at
    # 66.043 s (zookeeper session expiry): 4 x 6043 ms, plus three short rebalances' gaps
    assert 4 * 6043 < run["unowned_partition_ms"] < 4 * 6043 + 1000
    (group,) = run_scenario(load_scenario(path)).groups
    # by hand from the log: 3x21 + 9x24 (t=20 s), 3x35 + 9x26 (40 s), 4x6043 + 8x32 (60 s)
    assert run["unowned_partition_ms"] == group.unowned_partition_ms == 25_046
