"""The rebalance history across a KIP-848 online migration (group_upgraded / group_downgraded):
one group id, one history, read from the lessons' real event logs.

Every expected value is recomputed here from the log itself (the switch events, the state
changes, the callbacks), not copied from the table: the upgrade ends the classic generation,
the consumer group's epochs go on from it, the downgrade starts a classic generation again."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from typer.testing import CliRunner

from scenarios.cli import app
from scenarios.loader import library_path, load_scenario
from scenarios.play import play
from scenarios.report import rebalance_outcome


def _run(lesson: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    result = play(load_scenario(library_path() / f"{lesson}.yaml"))
    return [dict(e) for e in result.events], [dict(r) for r in result.rebalances]


@pytest.fixture(scope="module")
def upgrade() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return _run("online-upgrade-and-downgrade")


def _one(events: list[dict[str, Any]], name: str) -> dict[str, Any]:
    found = [e for e in events if e["event"] == name]
    assert len(found) == 1
    return found[0]


def _owners_at(events: list[dict[str, Any]], group: str, t_ms: int) -> dict[str, str]:
    """partition -> its last assigned owner at t_ms (callbacks only, a revoke keeps the name)."""
    owners: dict[str, str] = {}
    for e in events:
        if e["t_ms"] > t_ms:
            break
        if (
            e["event"] == "rebalance_callback"
            and e.get("group_id") == group
            and e["callback"] == "assigned"
        ):
            owners.update(dict.fromkeys(e["partitions"], e["node"]))
    return owners


def _moved(events: list[dict[str, Any]], group: str, before_ms: int, after_ms: int) -> int:
    before, after = _owners_at(events, group, before_ms), _owners_at(events, group, after_ms)
    return sum(1 for p, node in before.items() if after.get(p) != node)


def test_the_upgrade_ends_the_classic_generation_not_dead(upgrade):
    events, records = upgrade
    up = _one(events, "group_upgraded")
    classic_before = [r for r in records if r["start_ms"] < up["t_ms"]]
    last = classic_before[-1]
    # the classic generation the group was converted at, Stable before the upgrade
    assert last["protocol"] != "consumer"
    assert last["generation_id"] == up["generation_id"]
    assert last["outcome"] == "Stable" and last["end_ms"] < up["t_ms"]
    assert last["ended_by"] == "upgraded"
    assert rebalance_outcome(last) == "Stable, upgraded"
    assert all(r["outcome"] != "Dead" for r in records)
    # its measures: from C1's leave (its revocation) to the last assignment of that generation
    revoked = [
        e
        for e in events
        if e["event"] == "rebalance_callback"
        and last["start_ms"] <= e["t_ms"] <= last["end_ms"]
        and e["callback"] == "revoked"
    ]
    assert last["start_ms"] == revoked[0]["t_ms"]
    assert last["partitions_revoked"] == sum(len(e["partitions"]) for e in revoked)
    assert last["partitions_moved"] == _moved(events, "app", last["start_ms"] - 1, last["end_ms"])


def test_the_consumer_group_epochs_continue_from_the_classic_generation(upgrade):
    events, records = upgrade
    up, down = _one(events, "group_upgraded"), _one(events, "group_downgraded")
    modern = [r for r in records if r["protocol"] == "consumer"]
    # fromClassicGroup: the group epoch starts at the generation; C1's join bumps it once more
    bumps = [
        e["group_epoch"]
        for e in events
        if e["event"] == "consumer_group_epoch_bumped" and up["t_ms"] <= e["t_ms"] <= down["t_ms"]
    ]
    assert bumps[0] == up["generation_id"]
    assert [r["generation_id"] for r in modern] == bumps[1:]
    assert all(up["t_ms"] <= r["start_ms"] and r["end_ms"] <= down["t_ms"] for r in modern)
    assert [r["ended_by"] for r in modern] == [None] * (len(modern) - 1) + ["downgraded"]
    # every window measured from the ownership when it opened: a classic member inside the
    # consumer group revokes and gets back what it keeps, which is no move
    for r in modern:
        assert r["partitions_moved"] == _moved(events, "app", r["start_ms"] - 1, r["end_ms"])
    # no record of the one group overlaps another (one history, not two trackers)
    ordered = sorted(records, key=lambda r: r["start_ms"])
    for a, b in itertools.pairwise(ordered):
        assert a["end_ms"] <= b["start_ms"]


def test_the_downgrade_starts_a_classic_generation_again(upgrade):
    events, records = upgrade
    down = _one(events, "group_downgraded")
    after = [r for r in records if r["end_ms"] > down["t_ms"]]
    first = after[0]
    assert first["protocol"] != "consumer"
    assert first["trigger"] == "group_downgraded"
    # the generation after the group epoch the classic group starts at
    assert first["generation_id"] == down["generation_id"] + 1
    # it starts with the leaving member's revocation, just before the downgrade
    leaver = [
        e
        for e in events
        if e["event"] == "rebalance_callback"
        and e["callback"] == "revoked"
        and e["t_ms"] <= down["t_ms"]
    ][-1]
    assert first["start_ms"] == leaver["t_ms"]
    # paused: every partition revoked in it, from its revocation to its next assignment
    paused = 0
    for e in events:
        if (
            e["event"] == "rebalance_callback"
            and e["callback"] == "revoked"
            and first["start_ms"] <= e["t_ms"] <= first["end_ms"]
        ):
            for p in e["partitions"]:
                back = next(
                    x
                    for x in events
                    if x["event"] == "rebalance_callback"
                    and x["callback"] == "assigned"
                    and x["t_ms"] >= e["t_ms"]
                    and p in x["partitions"]
                )
                paused += back["t_ms"] - e["t_ms"]
    assert first["paused_partition_ms"] == paused
    assert first["partitions_moved"] == _moved(
        events, "app", first["start_ms"] - 1, first["end_ms"]
    )


def test_unowned_time_inside_rebalances_is_not_counted_twice():
    result = CliRunner().invoke(app, ["run", "--json", "online-upgrade-and-downgrade"])
    doc = json.loads(result.output)
    (group,) = doc["groups"]
    inside = sum(r["paused_partition_ms"] for r in doc["rebalances"])
    assert group["unowned_in_rebalances_partition_ms"] == inside
    assert inside <= group["unowned_partition_ms"]


def test_migration_policy_disabled_rows():
    events, records = _run("migration-policy-disabled")
    assert not [e for e in events if e["event"] in ("group_upgraded", "group_downgraded")]
    orders = [r for r in records if r["group_id"] == "orders"]
    epochs = [
        e["group_epoch"]
        for e in events
        if e["event"] == "consumer_group_state_changed"
        and e["group_id"] == "orders"
        and e["state_from"] == "Stable"
    ]
    assert [r["generation_id"] for r in orders] == epochs
    assert all(r["protocol"] == "consumer" and r["ended_by"] is None for r in orders)
    for r in orders:
        assert r["partitions_moved"] == _moved(events, "orders", r["start_ms"] - 1, r["end_ms"])
    # the classic D2 revokes everything when D1 leaves (eager) and gets it all back: only
    # D1's two partitions moved
    assert orders[-1]["partitions_moved"] == 2
    app_records = [r for r in records if r["group_id"] == "app"]
    assert [r["generation_id"] for r in app_records] == [1]
