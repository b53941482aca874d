"""Event-log analytics on a hand-written log whose durations are known."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.logs import analyse_logs, render_markdown
from scenarios.history import rebalances_from_events

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def _event(t: int, event: str, node: str, **fields: Any) -> dict[str, Any]:
    return {"t_ms": t, "event": event, "node": node, **fields}


def _state(t: int, old: str, new: str, gen: int, reason: str = "") -> dict[str, Any]:
    return _event(
        t,
        "group_state_changed",
        "broker-0",
        group_id="g1",
        state_from=old,
        state_to=new,
        generation_id=gen,
        reason=reason,
    )


def _callback(t: int, node: str, callback: str, parts: list[str], gen: int) -> dict[str, Any]:
    return _event(
        t,
        "rebalance_callback",
        node,
        group_id="g1",
        callback=callback,
        partitions=parts,
        generation_id=gen,
        member_id=f"{node}-m",
    )


def _response(t: int, error: str) -> dict[str, Any]:
    return _event(
        t,
        "response_sent",
        "broker-0",
        group_id="g1",
        api="Heartbeat",
        error=error,
        member_id="C0-m",
    )


# Two consumers join (rebalance 1: 10 -> last assignment 3030); C1 crashes at 10 s; its session
# expires at 25 s (rebalance 2: 25000 -> 25120, C0 revokes its two partitions at 25005).
EVENTS = [
    _event(0, "sim_consumer_started", "C0"),
    _event(0, "sim_consumer_started", "C1"),
    _state(10, "Empty", "PreparingRebalance", 0, "new member C0-m joined"),
    _state(3010, "PreparingRebalance", "CompletingRebalance", 1),
    _state(3020, "CompletingRebalance", "Stable", 1),
    _callback(3025, "C0", "assigned", ["T-0", "T-1"], 1),
    _callback(3030, "C1", "assigned", ["T-2", "T-3"], 1),
    _response(3100, "NONE"),
    _event(10_000, "sim_consumer_crashed", "C1"),
    _state(
        25_000, "Stable", "PreparingRebalance", 1, "removing member C1-m on heartbeat expiration"
    ),
    _response(25_000, "REBALANCE_IN_PROGRESS"),
    _callback(25_005, "C0", "revoked", ["T-0", "T-1"], 1),
    _response(25_050, "REBALANCE_IN_PROGRESS"),
    _state(25_100, "PreparingRebalance", "CompletingRebalance", 2),
    _state(25_110, "CompletingRebalance", "Stable", 2),
    _callback(25_120, "C0", "assigned", ["T-0", "T-1", "T-2", "T-3"], 2),
    _event(30_000, "sim_consumer_commit", "C0"),
]


def _write(path: Path, events: list[dict[str, Any]]) -> None:
    lines = [json.dumps({**e, "seq": i}, sort_keys=True) for i, e in enumerate(events)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_known_log(spark: Any, tmp_path: Path) -> None:
    _write(tmp_path / "run.jsonl", EVENTS)
    a = analyse_logs(spark, [str(tmp_path / "run.jsonl")])

    assert a.rebalances["duration_ms"].tolist() == [3020, 120]
    assert a.rebalances["start_ms"].tolist() == [10, 25_000]
    want = [
        r.to_dict() for r in rebalances_from_events([{**e, "seq": i} for i, e in enumerate(EVENTS)])
    ]
    for column in (
        "generation_id",
        "partitions_moved",
        "partitions_revoked",
        "paused_partition_ms",
    ):
        assert a.rebalances[column].tolist() == [w[column] for w in want]
    summary = a.rebalance_summary.iloc[0]
    assert (summary["rebalances"], summary["max_ms"], summary["mean_ms"]) == (2, 3020, 1570.0)

    times = dict(zip(a.state_times["state"], a.state_times["ms"], strict=True))
    assert times == {
        "PreparingRebalance": 3000 + 100,
        "CompletingRebalance": 10 + 10,
        "Stable": (25_000 - 3020) + (30_000 - 25_110),  # the last state lasts to the log's end
    }

    errors = a.errors.to_dict("records")
    assert errors == [
        {
            "log": "run.jsonl",
            "group_id": "g1",
            "api": "Heartbeat",
            "error": "REBALANCE_IN_PROGRESS",
            "count": 2,
        }
    ]

    members = {r["node"]: r for r in a.members.to_dict("records")}
    assert (members["C0"]["alive_ms"], members["C0"]["without_partitions_ms"]) == (
        30_000,
        3025 + 115,
    )
    assert (members["C1"]["alive_ms"], members["C1"]["without_partitions_ms"]) == (10_000, 3030)
    assert members["C1"]["group_id"] == "g1"

    text = render_markdown(a)
    assert "REBALANCE_IN_PROGRESS" in text and "| run.jsonl | g1 | 2 |" in text


def test_two_logs_are_kept_apart(spark: Any, tmp_path: Path) -> None:
    _write(tmp_path / "a.jsonl", EVENTS)
    _write(tmp_path / "b.jsonl", EVENTS[:8])  # only the first rebalance, log ends at 3100
    a = analyse_logs(spark, [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")])
    assert a.rebalance_summary[["log", "rebalances"]].values.tolist() == [
        ["a.jsonl", 2],
        ["b.jsonl", 1],
    ]
    stable = a.state_times[(a.state_times["state"] == "Stable")]
    assert stable[["log", "ms"]].values.tolist() == [["a.jsonl", 26_870], ["b.jsonl", 80]]
