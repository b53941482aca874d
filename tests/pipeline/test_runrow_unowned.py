"""The runs table's unowned_partition_seconds is the run result's unowned time, in seconds."""

from __future__ import annotations

from pipeline.runrow import RUN_COLUMNS, RowTask, run_row
from scenarios.loader import load_scenario
from scenarios.runner import run_scenario
from tests.scenarios.test_defaults import STATIC_CLOSE


def test_unowned_partition_seconds_column() -> None:
    assert "unowned_partition_seconds" in RUN_COLUMNS
    row = {"scenario_id": 0, "point": 0, "variant": "base", "seed": 0, "params": {}}
    run, _ = run_row(RowTask(STATIC_CLOSE, "static-close.yaml"), {**row, "overrides": "{}"})
    assert run["error"] is None
    (group,) = run_scenario(load_scenario(STATIC_CLOSE), seed=0).groups
    assert run["unowned_partition_seconds"] == group.unowned_partition_ms / 1000.0
    assert 10.0 <= run["unowned_partition_seconds"] < 10.1  # C0 closed (static) for 5 s, 2 parts
    assert run["paused_partition_seconds"] == 0.0  # none of it inside a rebalance
