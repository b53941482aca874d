"""The page's views of KIP-848 groups and of seed 004's designs (scenarios/html.py with
scenarios/page_snapshots.py), checked against the run they came from: its event log, and the
coordinator's and ZooKeeper servers' state read while it ran."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from scenarios.html import STATUS, build_view, run_for_page
from scenarios.loader import load_scenario
from scenarios.page_snapshots import run_with_snapshots
from scenarios.report import member_names
from scenarios.runner import run_scenario
from scripts.log_digests import digest

KIP848 = "rolling-restart-consumer-protocol"
SPLIT_BRAIN = "seed004-design1-split-brain-retry"
DESIGN2 = "seed004-design2-herd"


@cache
def _page(lesson: str) -> tuple[Any, Any, dict[str, Any]]:
    scenario = load_scenario(lesson)
    result, snapshots = run_for_page(scenario)
    return scenario, result, build_view(scenario, result, snapshots=snapshots)


def _replay(rows: list[list[Any]], step: int, width: int) -> dict[int, list[Any]]:
    """Rows ``[step, index, *values]`` folded up to ``step``: index -> values."""
    out: dict[int, list[Any]] = {}
    for row in rows:
        if row[0] > step:
            break
        out[row[1]] = row[2 : 2 + width]
    return out


@pytest.mark.parametrize(
    "lesson", [KIP848, "slow-reconciliation", "online-upgrade-and-downgrade", SPLIT_BRAIN, DESIGN2]
)
def test_taking_snapshots_leaves_the_log_byte_identical(lesson: str) -> None:
    scenario = load_scenario(lesson)
    plain = run_scenario(scenario)
    observed, snapshots = run_with_snapshots(scenario)
    assert digest(observed.events) == digest(plain.events)
    assert observed.passed == plain.passed
    # a classic run (design 2) needs none; the others have some, in log order
    if lesson == DESIGN2:
        return
    assert snapshots
    assert [s.after_seq for s in snapshots] == sorted(s.after_seq for s in snapshots)
    assert all(s.burst_start <= s.after_seq <= len(plain.events) for s in snapshots)


def test_a_kip848_page_shows_epochs_and_the_consumer_group_states() -> None:
    _scenario, result, view = _page(KIP848)
    assert view["mode"] == "consumer" and view["column"] == "epoch"
    assert set(view["machine"]["states"]) == {"Empty", "Assigning", "Reconciling", "Stable", "Dead"}
    logged = [
        (e["state_from"], e["state_to"], e["group_epoch"])
        for e in result.events
        if e["event"] == "consumer_group_state_changed"
    ]
    assert [(g[1], g[2], g[3]) for g in view["group"]] == logged
    # the epoch columns are the target assignment epochs the coordinator computed, in order
    computed = [
        e["assignment_epoch"]
        for e in result.events
        if e["event"] == "consumer_group_target_assignment_computed"
    ]
    assert [g[1] for g in view["generations"]] == sorted(set(computed))
    # the members' coordinator epochs and states are the coordinator's events' values
    names = member_names(result.events, [c for c in view["members"]])
    updates = [e for e in result.events if e["event"] == "consumer_group_member_updated"]
    assert {(names[e["member_id"]], e["member_epoch"], e["member_state"]) for e in updates} >= {
        (view["members"][r[1]], r[7], r[8]) for r in view["member_rows"] if r[7] != "-"
    }
    # at the end, every member is at the target epoch, in its client and at the coordinator
    final = _replay(view["member_rows"], len(view["steps"]), 9)
    last_epoch = view["generations"][-1][1]
    for values in final.values():
        assert values[0] == "STABLE" and values[4] == values[5] == last_epoch
        assert values[6] == "STABLE"


def test_kip848_revoking_and_unreleased_partitions_follow_the_coordinator() -> None:
    _scenario, _result, view = _page(KIP848)
    statuses = {STATUS[c[3]] for c in view["cells"]}
    assert {"revoking", "unreleased"} <= statuses
    members = view["members"]
    steps = view["steps"]
    for at, p, owner, status in view["cells"]:
        coord = _replay(view["coord_cells"], at, 3).get(p, [-1, -1, -1])
        tp = view["partitions"][p]
        if STATUS[status] == "revoking":
            # pending revocation from its owner at the coordinator, and that owner revokes it
            # (or loses it) in a later callback
            assert coord[1] == owner
            later = [
                s
                for s in steps[at:]
                if s[2] >= 0
                and s[3] == "callback"
                and s[4].startswith(f"{members[owner]}: onPartitions")
                and "Assigned" not in s[4]
                and tp in s[4]
            ]
            assert later, (at, tp)
        elif STATUS[status] == "unreleased":
            # nobody consumes it; the coordinator still counts it as the old owner's
            assert owner == -1 and coord[1] >= 0 and coord[2] != coord[1]
    # the coordinator's column at the end: each partition assigned to whom consumes it
    end = len(steps)
    coords = _replay(view["coord_cells"], end, 3)
    owners = _replay(view["cells"], end, 2)
    assert {p: (c[0], c[1]) for p, c in coords.items()} == {
        p: (o[0], -1) for p, o in owners.items()
    }
    assert {STATUS[o[1]] for o in owners.values()} == {"owned"}


def test_kip848_heartbeats_that_change_the_group_are_drawn_with_their_epoch() -> None:
    """A ConsumerGroupHeartbeat is drawn when its handling changed the group (a
    consumer_group_* event between its request and its response) or failed; the routine ones
    (thousands in a large group) are not."""
    _scenario, result, view = _page(KIP848)
    epoch_sent: dict[tuple[str, int], int] = {}
    expected: list[str] = []
    handling: tuple[str, int] | None = None
    changed = False
    for e in result.events:
        name = e["event"]
        if e.get("api") == "ConsumerGroupHeartbeat":
            if name == "request_sent":
                epoch_sent[(e["node"], e["correlation_id"])] = e["generation_id"]
            elif name == "request_received":
                handling, changed = (e["src"], e["correlation_id"]), False
            elif name == "response_sent":
                assert handling == (e["dst"], e["correlation_id"])
                if changed or e["error"] != "NONE":
                    expected.append(f"ConsumerGroupHeartbeat epoch {epoch_sent[handling]}")
                handling = None
        elif handling is not None and name.startswith("consumer_group_"):
            changed = True
    drawn = [a[4] for a in view["arrows"] if a[4].startswith("ConsumerGroupHeartbeat epoch")]
    assert sorted(drawn) == sorted(expected)
    sent = sum(1 for e in result.events if e["event"] == "request_sent")
    assert 0 < len(drawn) < sent
    assert "ConsumerGroupHeartbeat epoch -1" in drawn  # the leaves
    assert "ConsumerGroupHeartbeat epoch 0" in drawn  # the joins
    ends = [a[3] for a in view["arrows"]]
    assert ends == sorted(ends)


def test_a_zookeeper_page_shows_each_servers_lagging_view() -> None:
    _scenario, _result, view = _page(SPLIT_BRAIN)
    assert view["mode"] == "zookeeper" and view["zk_servers"] == ["zk-0", "zk-1", "zk-2"]
    assert [lane["id"] for lane in view["lanes"][:3]] == ["zk-0", "zk-1", "zk-2"]
    assert not any(lane["kind"] == "broker" for lane in view["lanes"])
    # zk-2 lags the leader by 1 s: it is behind at some step, and caught up at the end
    behind = {r[1]: [] for r in view["zk_rows"]}
    for r in view["zk_rows"]:
        behind[r[1]].append(r[3])
    assert max(behind[2]) > 0 and max(behind[1]) == 0
    end = _replay(view["zk_rows"], len(view["steps"]), 4)
    assert {v[0] for v in end.values()} == {end[0][0]} and all(v[1] == 0 for v in end.values())
    # during the split brain, zk-2 still shows C2 owning T-4 after the leader freed it, or
    # the reverse: the servers disagree at some step
    zs = len(view["zk_servers"])
    owners: dict[tuple[int, int], int] = {}
    disagreed = False
    for _at, p, server, owner in view["zk_cells"]:
        owners[(p, server)] = owner
        if len({owners.get((p, s), -1) for s in range(zs)}) > 1:
            disagreed = True
    assert disagreed
    # at the end every server's owner znodes are who fetches each partition
    fetch = _replay(view["cells"], len(view["steps"]), 1)
    final = {(p, s): o for (p, s), o in owners.items()}
    for p, (o,) in fetch.items():
        assert all(final[(p, s)] == o for s in range(zs))


def test_zookeeper_watches_claims_and_conflicts_are_arrows() -> None:
    _scenario, result, view = _page(SPLIT_BRAIN)
    lane = {lane["id"]: i for i, lane in enumerate(view["lanes"])}
    watches = [a for a in view["arrows"] if a[5] == "watch"]
    received = [e for e in result.events if e["event"] == "zk_watch_received"]
    assert len(watches) == len(received)
    # C2 is on zk-2: its notifications come from zk-2
    assert {a[0] for a in watches if a[2] == lane["C2"]} == {lane["zk-2"]}
    conflicts = [a for a in view["arrows"] if a[4].startswith("NodeExists")]
    logged = [e for e in result.events if e["event"] == "zk_ownership_conflict"]
    assert len(conflicts) == len(logged) == 3
    assert {(a[2], a[4]) for a in conflicts} == {
        (lane["C3"], "NodeExists owners/T/4"),
        (lane["C3"], "NodeExists owners/T/5"),
    }
    claims = [a for a in view["arrows"] if a[4].startswith("createEphemeral owners/")]
    assert {a[2] for a in claims} == {lane["zk-0"]}  # every write goes through the leader
    measures = dict(view["measures"])
    assert measures["conflicts"] == "3" and measures["retries"] == "2"
    assert measures["settle time after t = 40.000 s"] == "6.017 s"


def test_a_coordinator_assigns_page_has_the_assignment_in_joingroup_and_no_syncgroup() -> None:
    _scenario, result, view = _page(DESIGN2)
    assert view["mode"] == "coordinator-assigns"
    labels = {a[4] for a in view["arrows"]}
    assert "JoinGroup + assignment" in labels
    assert not any("SyncGroup" in label for label in labels)
    assert not any(e.get("api") == "SyncGroup" for e in result.events)
    # a generation column per assignment the coordinator computed, filled from what each
    # member received
    computed = [e for e in result.events if e["event"] == "server_assignment_computed"]
    assert [g[1] for g in view["generations"]] == [e["generation_id"] for e in computed]
    received: dict[str, str] = {}
    last = computed[-1]["generation_id"]
    for e in result.events:
        if e["event"] == "assignment_received" and e["generation_id"] == last:
            received.update(dict.fromkeys(e["partitions"], e["node"]))
    column = view["generations"][-1][2]
    assert {view["partitions"][p]: view["members"][o] for p, o in enumerate(column)} == received
    assert dict(view["measures"])["design"] == "coordinator-assigns"


def test_a_page_built_from_a_plain_run_gets_the_same_snapshots() -> None:
    """``groupsim run --html`` and the pytest plugin hold a RunResult from run_scenario: the
    page plays the run again for its snapshots (deterministic), giving the same page."""
    scenario, _result, view = _page(KIP848)
    plain = run_scenario(scenario)
    assert build_view(scenario, plain) == view
