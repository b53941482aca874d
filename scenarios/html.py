"""``groupsim html``: one self-contained HTML page that replays a run, step by step, in a browser.

The page is a *view of the event log*, like the terminal timeline (report.py) and ``groupsim step``
(stepper.py): everything it shows is computed here, in Python, from the run's events. The browser
only looks values up by step: it never decides what a JoinGroup means (the lesson of The Secret
Lives of Data: drive the animation from a deterministic trace, do not re-implement the protocol in
JavaScript). The page has no server, no network access and no build step: the CSS and the
hand-written JavaScript in ``scenarios/web/`` and the data (JSON) are inlined into one file.

A **step** is one line of the teaching timeline (``describe_event``; every event with
``verbose``). Events that are not steps (heartbeats, timers, the client side of a request) still
change the state; their changes show at the next step. The data, all indexed by step:

* ``steps``: ``[t_ms, seq, lane, kind, text]`` per step (lane -1: the scenario itself);
* ``arrows``: requests and responses between lanes, ``[from_lane, from_pos, to_lane, to_pos,
  label, kind]`` (a position is a step index; an event that is not a step sits half-way before
  the next step);
* ``group``: the group's state machine, ``[step, state_from, state_to, generation, cause]``;
* ``info``: leader / members / protocol / generation, ``[step, key, value]``;
* ``member_rows``: each member's client state, member-table presence and owned count,
  ``[step, member, client_state, in_group, owned, leader]`` (a full row on every change);
* ``cells``: the partition -> owner grid, ``[step, partition, owner, status]`` (owner -1: none);
  status is one of STATUS (see ``_status``);
* ``generations``: the assignment each generation's leader computed, ``[step, generation,
  [owner per partition]]``;
* ``callouts``: narration, expectations (pass/fail at their step) and invariant violations;
* ``mode``: ``classic``, ``consumer`` (a KIP-848 group), ``zookeeper`` or ``coordinator-assigns``
  (seed 004's designs), with ``machine`` (the state machine to draw), ``info_keys`` and
  ``measures`` (seed 004's measures of the run, label/value lines);
* ``machine_at``, ``[step, machine]``, and ``machines`` (name -> machine): only when the group
  changed type mid-run (online upgrade/downgrade, KIP-848); the page draws each step's machine;
* KIP-848: ``member_rows`` gain the client's epoch and the coordinator's epoch, member state,
  assigned and pending-revocation counts; ``coord_cells``, ``[step, partition, assigned_to,
  pending_from, target]`` (member indexes, -1: none); ``generations`` are the target assignment
  of each assignment epoch; statuses ``revoking`` and ``unreleased`` (see ``_consumer_status``);
* ZooKeeper: ``zk_servers`` (names), ``zk_rows``, ``[step, server, applied_zxid, behind_leader,
  [registered], owner_znodes]``, and ``zk_cells``, ``[step, partition, server, owner]``;
  ``generations`` are the assignments each consumer computed, per try.

KIP-848's coordinator state and the ZooKeeper servers' trees are not all in the log: they come
from snapshots taken while the run played (``scenarios.page_snapshots``), which leave the log as
it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from coordinator.placement import partition_for
from scenarios.model import Scenario
from scenarios.page_snapshots import CONSUMER_GROUP, Snapshot, needs_snapshots, run_with_snapshots
from scenarios.page_snapshots import ZOOKEEPER as ZOOKEEPER_SNAPSHOT
from scenarios.report import describe_event, member_names, shorten_text
from scenarios.result import GroupResult, RunResult, _plain

if TYPE_CHECKING:
    from scenarios.simulation import Simulation

VIEW_VERSION = 2
#: partition status codes in ``cells`` (the page's legend uses the same order); the last two
#: only occur in KIP-848 groups, whose coordinator state the page reads from snapshots
STATUS = ("unowned", "owned", "moving", "revoked", "paused", "revoking", "unreleased")
UNOWNED, OWNED, MOVING, REVOKED, PAUSED, REVOKING, UNRELEASED = range(len(STATUS))
GROUP_STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead")
#: the views' modes: what kind of group the page shows
CLASSIC, CONSUMER, ZOOKEEPER, COORDINATOR_ASSIGNS = (
    "classic",
    "consumer",
    "zookeeper",
    "coordinator-assigns",
)
#: the state machines the page draws: states at (x, y) and the legal transitions as SVG paths.
#: Classic: ClassicGroupState's validPreviousStates. Consumer: ConsumerGroup.ConsumerGroupState,
#: a state derived after every change (ConsumerGroup.maybeUpdateGroupState: Empty without
#: members, Assigning while the target epoch lags the group epoch, Reconciling while a member
#: is not at the target epoch, else Stable), so any of the four live states can follow any
#: other: all twelve are drawn, with the ways into Dead that a run takes (a deletion from Empty,
#: a conversion to the other protocol from Stable); an undrawn one still lights its state.
MACHINES: dict[str, dict[str, Any]] = {
    CLASSIC: {
        "states": {
            "Empty": [70, 60],
            "PreparingRebalance": [210, 60],
            "CompletingRebalance": [350, 60],
            "Stable": [490, 60],
            "Dead": [280, 195],
        },
        "edges": [
            ["Empty", "PreparingRebalance", "M 120 55 L 145 55"],
            ["PreparingRebalance", "CompletingRebalance", "M 275 55 L 285 55"],
            ["CompletingRebalance", "Stable", "M 415 55 L 435 55"],
            ["Stable", "PreparingRebalance", "M 490 40 C 490 0, 210 0, 210 38"],
            ["CompletingRebalance", "PreparingRebalance", "M 335 82 C 320 110, 240 110, 225 84"],
            ["PreparingRebalance", "Empty", "M 190 84 C 170 120, 90 120, 75 84"],
            ["Empty", "Dead", "M 70 84 L 222 186"],
            ["PreparingRebalance", "Dead", "M 215 84 L 255 176"],
            ["CompletingRebalance", "Dead", "M 345 84 L 305 176"],
            ["Stable", "Dead", "M 490 84 L 340 186"],
        ],
    },
    CONSUMER: {
        "states": {
            "Empty": [70, 60],
            "Assigning": [210, 60],
            "Reconciling": [350, 60],
            "Stable": [490, 60],
            "Dead": [280, 195],
        },
        "edges": [
            ["Empty", "Assigning", "M 120 55 L 155 55"],
            ["Assigning", "Reconciling", "M 260 55 L 295 55"],
            ["Reconciling", "Stable", "M 400 55 L 435 55"],
            ["Stable", "Assigning", "M 490 38 C 490 8, 215 8, 215 36"],
            ["Empty", "Stable", "M 65 38 C 65 -12, 505 -12, 505 36"],
            ["Stable", "Reconciling", "M 480 84 C 460 115, 380 115, 362 86"],
            ["Reconciling", "Assigning", "M 340 84 C 320 115, 240 115, 222 86"],
            ["Assigning", "Empty", "M 200 84 C 180 115, 100 115, 82 86"],
            ["Stable", "Empty", "M 500 84 C 520 160, 60 160, 60 86"],
            ["Empty", "Dead", "M 70 84 L 222 186"],
            # ConsumerGroup.maybeUpdateGroupState derives the state afresh after every change, so
            # these happen too (a target computed and reconciled at once; an upgrade; a downgrade)
            ["Assigning", "Stable", "M 228 38 C 250 18, 450 18, 472 38"],
            ["Empty", "Reconciling", "M 76 86 C 100 136, 330 136, 352 86"],
            ["Stable", "Dead", "M 470 86 L 322 178"],
            ["Reconciling", "Empty", "M 362 86 C 340 150, 96 150, 74 86"],
        ],
    },
}
_DEAD_EVENTS = ("sim_consumer_crashed", "consumer_crashed", "consumer_fatal")
_CLIENT_END = {
    "consumer_crashed": "CRASHED",
    "sim_consumer_crashed": "CRASHED",
    "consumer_closed": "CLOSED",
    "consumer_fatal": "FAILED",
}


_GROUP_EVENTS = (
    "group_state_changed",
    "consumer_group_state_changed",
    "server_assignment_computed",
)
_ZK_ERRORS = ("zk_ownership_conflict", "zk_rebalance_attempt_failed", "zk_rebalance_failed")
#: a ZooKeeper consumer's activity, as the members table shows it (from its zk_* events)
_ZK_STATES = {
    "zk_consumer_registered": "REGISTERED",
    "zk_rebalance_attempt": "REBALANCING",
    "zk_rebalance_attempt_failed": "BACKING_OFF",
    "zk_rebalance_done": "FETCHING",
    "zk_rebalance_failed": "GAVE_UP",
}


def _kind(e: Mapping[str, Any], style: str) -> str:
    """A CSS class for a step: what sort of line it is."""
    name = str(e.get("event", ""))
    if name in _GROUP_EVENTS:
        return "group"
    if name in _ZK_ERRORS:
        return "error"
    if name == "zk_watch_received":
        return "watch"
    if name == "zk_rebalance_done":
        return "callback"
    if name.startswith("sim_") and name not in (
        "sim_message_lost",
        "sim_disconnected",
        "sim_request_delayed",
    ):
        return "action"
    if name == "scenario_note":
        return "note"
    if name in ("invariant_violated", "invariant_violation"):
        return "violation"
    if name == "client_state":
        return "client"
    if name == "rebalance_callback":
        return "callback"
    if name in ("request_received", "scenario_raw_sent"):
        return "request"
    if name == "response_sent":
        return "error" if "red" in style else "response"
    return "error" if "red" in style else "other"


#: the group facts each mode shows beside its state machine (``info`` rows carry them)
_INFO_KEYS = {
    CLASSIC: ["generation", "leader", "protocol"],
    COORDINATOR_ASSIGNS: ["generation", "protocol", "assignment"],
    CONSUMER: ["group epoch", "target epoch", "assignor"],
    ZOOKEEPER: ["leader zxid", "registered", "notifications", "rebalance attempts", "conflicts"],
}


def _zk_path(path: Any) -> str:
    """A znode path without its ``/consumers/<group>/`` prefix (``owners/T/4``, ``ids/g_C1``)."""
    parts = str(path or "").split("/")
    return "/".join(parts[3:]) if len(parts) > 3 and parts[1] == "consumers" else str(path)


def _seconds(ms: Any) -> str:
    return f"{int(ms) / 1000:.3f} s" if isinstance(ms, int) else "never"


def _measure_rows(measures: Mapping[str, Any] | None) -> list[list[str]]:
    """Seed 004's measures of the run (scenarios.measures), as label/value lines."""
    if not measures:
        return []
    rows = [
        ["design", str(measures.get("design", "-"))],
        ["notifications", str(measures.get("notifications", 0))],
        ["rebalance attempts", str(measures.get("rebalance_attempts", 0))],
        ["conflicts", str(measures.get("conflicts", 0))],
        ["retries", str(measures.get("retries", 0))],
        ["failed rebalances", str(measures.get("failed_rebalances", 0))],
    ]
    for s in measures.get("settle_ms") or ():
        rows.append(
            [f"settle time after t = {_seconds(s.get('at_ms'))}", _seconds(s.get("after_ms"))]
        )
    rows.append(["unowned partition-time", _seconds(measures.get("unowned_partition_ms", 0))])
    return rows


def _tp_key(tp: str) -> tuple[str, int]:
    topic, _, part = tp.rpartition("-")
    return (topic, int(part)) if part.isdigit() else (tp, -1)


class _Builder:
    """Folds the event log into the page's step-indexed data (one pass, no look-ahead)."""

    def __init__(
        self,
        scenario: Scenario,
        result: RunResult,
        group: str | None,
        verbose: bool,
        snapshots: Sequence[Snapshot] = (),
    ):
        self.scenario = scenario
        self.snapshots = list(snapshots)
        self.snap_i = 0
        self.result = result
        self.verbose = verbose
        self.gid = group or (scenario.groups[0] if scenario.groups else None)
        events = result.events
        self.consumer_ids = [c.id for c in scenario.consumers]
        self.group_consumers = {c.id for c in scenario.consumers if c.group == self.gid}
        self.names = member_names(events, self.consumer_ids)
        self.raw_nodes = frozenset(
            str(e.get("src")) for e in events if e.get("event") == "scenario_raw_sent"
        )
        self.offsets_partitions = frozenset(g.offsets_partition for g in result.groups)
        # one pass over the log: the nodes (lanes) and the group's partitions (whatever its
        # consumers see in metadata, assignments and callbacks)
        zookeeper = scenario.design == ZOOKEEPER
        brokers = set() if zookeeper else {f"broker-{i}" for i in range(scenario.cluster.brokers)}
        zk = scenario.cluster.zookeeper
        servers = (
            [f"zk-{i}" for i in range(zk.servers if zk is not None else 3)] if zookeeper else []
        )
        consumers = set(self.consumer_ids)
        others: dict[str, None] = {}
        parts: set[str] = set()
        modern = False
        # ZooKeeper: consumer ids and sessions -> nodes (who registered as whom)
        self.zk_nodes: dict[str, str] = {}
        self.session_node: dict[Any, str] = {}
        if zookeeper:
            for t in scenario.cluster.topics:
                parts.update(f"{t.name}-{p}" for p in range(t.partitions))
        for e in events:
            if (
                not modern
                and str(e.get("event", "")).startswith("consumer_group_")
                and e.get("group_id") == self.gid
            ):
                modern = True
            for key in ("node", "src", "dst"):
                n = e.get(key)
                if not isinstance(n, str) or n in consumers or n in ("", "-", "scenario"):
                    continue
                if n.startswith("broker-"):
                    brokers.add(n)
                elif n in servers:
                    continue
                else:
                    others.setdefault(n, None)
            if e.get("node") not in self.group_consumers:
                continue
            name = e.get("event")
            if name == "metadata_updated" and isinstance(e.get("topics"), dict):
                for topic, n in e["topics"].items():
                    if isinstance(n, int):
                        parts.update(f"{topic}-{p}" for p in range(n))
            elif name == "rebalance_callback":
                parts.update(str(tp) for tp in e.get("partitions") or ())
            elif name in ("assignment_computed", "zk_assignment_computed") and isinstance(
                e.get("assignment"), dict
            ):
                for tps in e["assignment"].values():
                    parts.update(str(tp) for tp in tps or ())
            elif name in ("assignment_received", "zk_rebalance_done"):
                parts.update(str(tp) for tp in e.get("partitions") or ())
            elif name == "zk_consumer_registered":
                self.zk_nodes[str(e.get("consumer_id"))] = str(e.get("node"))
                self.session_node[e.get("session_id")] = str(e.get("node"))
        if zookeeper:
            self.mode = ZOOKEEPER
        elif scenario.design == COORDINATOR_ASSIGNS:
            self.mode = COORDINATOR_ASSIGNS
        elif modern:
            self.mode = CONSUMER
        else:
            self.mode = CLASSIC
        self.lanes: list[dict[str, str]] = [{"id": z, "kind": "zookeeper"} for z in servers]
        self.lanes += [{"id": b, "kind": "broker"} for b in sorted(brokers, key=_tp_key)]
        self.lanes += [
            {"id": c.id, "kind": "consumer", "group": c.group} for c in scenario.consumers
        ]
        self.lanes += [{"id": n, "kind": "client"} for n in others]
        self.lane_index = {lane["id"]: i for i, lane in enumerate(self.lanes)}
        self.members = [c for c in self.consumer_ids if c in self.group_consumers]
        self.member_index = {m: i for i, m in enumerate(self.members)}
        self.partitions = sorted(parts, key=_tp_key)
        self.partition_index = {p: i for i, p in enumerate(self.partitions)}
        # outputs
        self.steps: list[list[Any]] = []
        self.arrows: list[list[Any]] = []
        self.group_changes: list[list[Any]] = []
        # the group's type changes (KIP-848 online migration): [step, machine to draw]
        self.machine_changes: list[list[Any]] = []
        self.info: list[list[Any]] = []
        self.member_rows: list[list[Any]] = []
        self.cells: list[list[Any]] = []
        self.generations: list[list[Any]] = []
        self.callouts: list[dict[str, Any]] = []
        # folding state
        self.owner: dict[str, str] = {}  # partition -> node
        self.owns: dict[str, set[str]] = {}  # node -> partitions
        self.had_owner: set[str] = set()
        self.target: dict[str, str] = {}
        self.target_known = False
        self.shown: dict[str, tuple[int, int]] = {}
        self.stopped: set[str] = set()  # crashed or stalled: owns but does not consume
        self.stalls: list[tuple[int, str]] = []  # (until_ms, node)
        self.client_state: dict[str, str] = {}
        self.in_group: set[str] = set()
        self.leader: str | None = None
        self.row_shown: dict[str, tuple[Any, ...]] = {}
        self.pending_req: dict[tuple[str, Any, Any], float] = {}
        self.pending_resp: dict[tuple[str, Any, Any], tuple[float, str, str]] = {}
        self.last_retry: dict[str, tuple[Any, ...]] = {}
        # KIP-848: the members' epochs and states, the coordinator's partitions (snapshots)
        self.client_epoch: dict[str, int] = {}
        self.coord_member: dict[str, tuple[Any, ...]] = {}
        self.coord: dict[str, tuple[str | None, str | None, str | None]] = {}
        self.coord_known = False
        self.prev_members: Mapping[str, Any] = {}
        self.slots: dict[str, list[str | None]] = {}
        self.coord_shown: dict[str, tuple[int, int, int]] = {}
        self.coord_cells: list[list[Any]] = []
        self.last_epoch_column: Any = None
        self.req_epoch: dict[tuple[str, Any, Any], Any] = {}
        # the ConsumerGroupHeartbeat being handled, and whether it changed the group
        self.hb_request: tuple[tuple[str, Any, Any], tuple[Any, ...]] | None = None
        self.hb_changed = False
        # design 2: the assignment the coordinator computed, per generation, as members got it
        self.gen_column: tuple[Any, list[int]] | None = None
        # ZooKeeper: watches in flight, each server's view (zk_nodes, session_node: above)
        self.watches: dict[str, list[tuple[float, str]]] = {}
        self.zk_servers: list[list[Any]] = []
        self.zk_cells: list[list[Any]] = []
        self.zk_server_shown: dict[str, tuple[Any, ...]] = {}
        self.zk_cell_shown: dict[tuple[int, int], int] = {}
        self.zk_counts = {"attempts": 0, "conflicts": 0, "notifications": 0}
        self.info_shown: dict[str, Any] = {}

    # -- helpers --------------------------------------------------------------------------

    def _node_of(self, member_id: Any) -> str | None:
        if not isinstance(member_id, str) or not member_id:
            return None
        return self.names.get(member_id) or shorten_text(member_id, self.names)

    def _status(self, tp: str) -> int:
        owner = self.owner.get(tp)
        if self.coord_known:
            return self._consumer_status(tp, owner)
        if owner is None:
            return REVOKED if tp in self.had_owner else UNOWNED
        if owner in self.stopped:
            return PAUSED
        # the newest computed assignment gives it to another member, or (cooperative round 1)
        # to nobody yet: its owner is about to revoke it
        if self.target_known and self.target.get(tp) != owner:
            return MOVING
        return OWNED

    def _consumer_status(self, tp: str, owner: str | None) -> int:
        """A KIP-848 partition: who consumes it (the members' callbacks) against what the
        coordinator holds (snapshots): assigned to, pending revocation from, target owner."""
        _assigned, pending, target = self.coord.get(tp, (None, None, None))
        if owner is None:
            if pending is not None:
                # the coordinator still counts it as the old owner's: the new one waits
                return UNRELEASED
            return REVOKED if tp in self.had_owner else UNOWNED
        if owner in self.stopped:
            return PAUSED
        if pending == owner:
            return REVOKING
        if target != owner:
            return MOVING
        return OWNED

    def _refresh(self, idx: int, tps: Sequence[str]) -> None:
        for tp in tps:
            i = self.partition_index.get(tp)
            if i is None:
                continue
            owner = self.owner.get(tp)
            now = (self.member_index.get(owner, -1) if owner else -1, self._status(tp))
            if self.shown.get(tp, (-1, UNOWNED)) != now:
                self.shown[tp] = now
                self.cells.append([idx, i, now[0], now[1]])

    def _owned_by(self, node: str) -> list[str]:
        return sorted(self.owns.get(node, ()), key=_tp_key)

    def _own(self, tp: str, node: str | None) -> None:
        before = self.owner.pop(tp, None)
        if before is not None:
            self.owns[before].discard(tp)
        if node is not None:
            self.owner[tp] = node
            self.owns.setdefault(node, set()).add(tp)

    def _member_row(self, idx: int, node: str) -> None:
        i = self.member_index.get(node)
        if i is None:
            return
        row: tuple[Any, ...] = (
            self.client_state.get(node, "-"),
            1 if node in self.in_group else 0,
            len(self.owns.get(node, ())),
            1 if self.leader == node else 0,
        )
        if self.mode == CONSUMER:
            # the client's epoch, then the coordinator's: epoch, state, assigned, pending
            row += (self.client_epoch.get(node, "-"), *self.coord_member.get(node, ("-",) * 4))
        if self.row_shown.get(node) != row:
            self.row_shown[node] = row
            self.member_rows.append([idx, i, *row])

    def _index(self, node: str | None) -> int:
        return self.member_index.get(node, -1) if node else -1

    def _info(self, idx: int, key: str, value: Any) -> None:
        if self.info_shown.get(key, self) != value:
            self.info_shown[key] = value
            self.info.append([idx, key, value])

    def _pos(self, idx: int, is_step: bool) -> float:
        return float(idx) if is_step else idx - 0.5

    # -- the fold -------------------------------------------------------------------------

    def build(self) -> dict[str, Any]:
        if self.mode == COORDINATOR_ASSIGNS:
            self.info.append([0, "assignment", "by the coordinator, in JoinGroup (no SyncGroup)"])
        for e in self.result.events:
            self._event(e)
        last = max(len(self.steps) - 1, 0)
        self._snapshots_before(None)
        for stream in (
            self.group_changes,
            self.machine_changes,
            self.info,
            self.member_rows,
            self.cells,
            self.coord_cells,
            self.zk_servers,
            self.zk_cells,
        ):
            for row in stream:
                row[0] = min(row[0], last)
        for row in self.generations:
            row[0] = min(row[0], last)
        for arrow in self.arrows:
            arrow[1] = min(arrow[1], last)
            arrow[3] = min(arrow[3], last)
        # the viewer finds a window's arrows by their end (a heartbeat's request is drawn once
        # its response is known, after arrows that end later)
        self.arrows.sort(key=lambda a: a[3])
        self._callouts()
        r = self.result
        return {
            "version": VIEW_VERSION,
            "scenario": self.scenario.name,
            "description": self.scenario.description,
            "source": self.scenario.source,
            "seed": r.seed,
            "end_ms": r.end_ms,
            "passed": r.passed,
            "error": r.error,
            "group_id": self.gid,
            "verbose": self.verbose,
            "mode": self.mode,
            "status_names": list(STATUS),
            "group_states": list(GROUP_STATES),
            "machine": MACHINES.get(self.mode, MACHINES[CLASSIC]),
            "info_keys": _INFO_KEYS[self.mode],
            "column": "epoch" if self.mode == CONSUMER else "gen",
            "measures": _measure_rows(r.measures),
            "zk_servers": [lane["id"] for lane in self.lanes if lane["kind"] == "zookeeper"],
            "zk_rows": self.zk_servers,
            "zk_cells": self.zk_cells,
            "coord_cells": self.coord_cells,
            "lanes": self.lanes,
            "members": self.members,
            "partitions": self.partitions,
            "steps": self.steps,
            "arrows": self.arrows,
            "group": self.group_changes,
            "machine_at": self._machine_at(),
            "machines": {m: MACHINES[m] for m in (CLASSIC, CONSUMER)}
            if self.machine_changes
            else {},
            "info": self.info,
            "member_rows": self.member_rows,
            "cells": self.cells,
            "generations": self.generations,
            "callouts": self.callouts,
        }

    def _is_step(self, e: Mapping[str, Any]) -> tuple[str, str] | None:
        line = describe_event(
            e,
            self.names,
            verbose=self.verbose,
            raw_nodes=self.raw_nodes,
            partitions=self.offsets_partitions,
        )
        if line is None or self.verbose:
            return line
        # a run of identical retried failures is one line, as in the terminal timeline
        from scenarios.report import RETRIED_EVENTS

        node = str(e.get("node", ""))
        if e.get("event") in RETRIED_EVENTS:
            key = (e.get("event"), e.get("error"), e.get("reason"), e.get("api"))
            if self.last_retry.get(node) == key:
                return None
            self.last_retry[node] = key
        else:
            self.last_retry.pop(node, None)
        return line

    def _snapshots_before(self, seq: Any) -> None:
        """Apply the snapshots taken before event ``seq`` (all that are left: None). One whose
        engine event logged the latest step shows at that step, any other at the next step."""
        snaps = self.snapshots
        while self.snap_i < len(snaps) and (
            seq is None or not isinstance(seq, int) or snaps[self.snap_i].after_seq <= seq
        ):
            snap = snaps[self.snap_i]
            self.snap_i += 1
            idx = len(self.steps)
            last = self.steps[-1][1] if self.steps else None
            if isinstance(last, int) and last >= snap.burst_start:
                idx -= 1
            if snap.kind == CONSUMER_GROUP and self.mode == CONSUMER:
                self._consumer_group_snapshot(idx, snap.data)
            elif snap.kind == ZOOKEEPER_SNAPSHOT and self.mode == ZOOKEEPER:
                self._zookeeper_snapshot(idx, snap.data)

    def _consumer_group_snapshot(self, idx: int, data: Mapping[str, Any]) -> None:
        """Fold one snapshot of the coordinator's members in: only the members whose values
        changed since the previous one touch their partitions (a 200-member group changes a
        few members per heartbeat)."""
        members = data["members"]
        prev = self.prev_members
        changed: set[str] = set() if self.coord_known else set(self.owner)
        for mid in prev.keys() | members.keys():
            old, new = prev.get(mid), members.get(mid)
            if old == new:
                continue
            node = self._node_of(mid) or str(mid)
            for i, key in enumerate(("assigned", "pending", "target")):
                if old and new and old[key] == new[key]:
                    continue  # its epoch or state changed, not these partitions
                was: set[str] = set(old[key]) if old else set()
                has: set[str] = set(new[key]) if new else set()
                for tp in was - has:
                    slot = self.slots.get(tp)
                    if slot is not None and slot[i] == node:
                        slot[i] = None
                        changed.add(tp)
                for tp in has - was:
                    self.slots.setdefault(tp, [None, None, None])[i] = node
                    changed.add(tp)
        self.prev_members = members
        self.coord_known = True
        self.target_known = True
        for tp in changed:
            slot = self.slots.get(tp) or [None, None, None]
            self.coord[tp] = (slot[0], slot[1], slot[2])
            if slot[2] is None:
                self.target.pop(tp, None)
            else:
                self.target[tp] = slot[2]
        coord = self.coord
        for tp in sorted(changed, key=_tp_key):
            p = self.partition_index.get(tp)
            if p is None:
                continue
            a, pending, target = coord.get(tp, (None, None, None))
            now = (self._index(a), self._index(pending), self._index(target))
            if self.coord_shown.get(tp, (-1, -1, -1)) != now:
                self.coord_shown[tp] = now
                self.coord_cells.append([idx, p, *now])
        # a status depends on its partition's owner and coordinator view: only these changed
        self._refresh(idx, sorted(changed, key=_tp_key))
        epoch = data["assignment_epoch"]
        if epoch != self.last_epoch_column:
            self.last_epoch_column = epoch
            row = [self.member_index.get(self.target.get(p, ""), -1) for p in self.partitions]
            self.generations.append([idx, epoch, row])

    def _zookeeper_snapshot(self, idx: int, data: Mapping[str, Any]) -> None:
        leader = max((v["zxid"] for v in data.values()), default=0)
        for si, server in enumerate(data):
            view = data[server]
            ids = [self.zk_nodes.get(c, c) for c in view["ids"]]
            owners = view["owners"]
            row = (view["zxid"], leader - view["zxid"], ids, len(owners))
            if self.zk_server_shown.get(server) != row:
                self.zk_server_shown[server] = row
                self.zk_servers.append([idx, si, *row])
            for p, tp in enumerate(self.partitions):
                thread = owners.get(tp)
                node = self.zk_nodes.get(thread.rsplit("-", 1)[0], thread) if thread else None
                owner = self.member_index.get(node, -1) if node else -1
                if self.zk_cell_shown.get((si, p), -1) != owner:
                    self.zk_cell_shown[(si, p)] = owner
                    self.zk_cells.append([idx, p, si, owner])
            if si == 0:
                for node in self.members:
                    registered = node in ids
                    if registered != (node in self.in_group):
                        if registered:
                            self.in_group.add(node)
                        else:
                            self.in_group.discard(node)
                        self._member_row(idx, node)
                self._info(idx, "registered", len(ids))
                self._info(idx, "leader zxid", view["zxid"])

    def _event(self, e: Mapping[str, Any]) -> None:
        if self.snapshots:
            self._snapshots_before(e.get("seq"))
        line = self._is_step(e)
        idx = len(self.steps)
        name = str(e.get("event", ""))
        node = str(e.get("node", ""))
        t = int(e.get("t_ms", 0) or 0)
        if line is not None:
            lane = self.lane_index.get(node, -1)
            if name in ("request_received", "response_sent", "scenario_raw_sent"):
                lane = self.lane_index.get(str(e.get("src")), lane)
            self.steps.append([t, e.get("seq"), lane, _kind(e, line[1]), line[0]])
        is_step = line is not None
        self._messages(e, idx, is_step)
        self._stall_ends(idx, t)
        gid = self.gid
        if node.startswith("broker-") and e.get("group_id") == gid:
            self._coordinator(e, idx)
        if node in self.group_consumers:
            self._consumer(e, idx, node, name)

    def _messages(self, e: Mapping[str, Any], idx: int, is_step: bool) -> None:
        name = e.get("event")
        if self.hb_request is not None and str(name).startswith("consumer_group_"):
            self.hb_changed = True
        pos = self._pos(idx, is_step)
        # KIP-848's heartbeats carry the protocol (epochs, assignments): drawn, but for those
        # that changed nothing at the coordinator and got no error (a 200-member group sends
        # thousands); whether one did is known at its response (see _heartbeat_changes)
        heartbeat = e.get("api") == "ConsumerGroupHeartbeat"
        shown = is_step
        if name == "request_sent":
            key = (str(e.get("node")), e.get("correlation_id"), e.get("api"))
            self.pending_req[key] = pos
            if e.get("api") == "ConsumerGroupHeartbeat":
                self.req_epoch[key] = e.get("generation_id")
        elif name == "request_received":
            src = str(e.get("src"))
            key = (src, e.get("correlation_id"), e.get("api"))
            sent = self.pending_req.pop(key, None)
            if sent is None:
                sent = pos
            label = f"{e.get('api')}"
            if key in self.req_epoch:
                label += f" epoch {self.req_epoch.pop(key)}"
            if shown:
                self._arrow(src, sent, str(e.get("node")), pos, label, "request")
            elif heartbeat:
                self.hb_request = (key, (src, sent, str(e.get("node")), pos, label, "request"))
                self.hb_changed = False
        elif name == "response_sent":
            key = (str(e.get("dst")), e.get("correlation_id"), e.get("api"))
            error = e.get("error")
            kind = "response" if error in (None, "NONE") else "error"
            label = f"{e.get('api')} {error}" if kind == "error" else f"{e.get('api')}"
            if self.mode == COORDINATOR_ASSIGNS and e.get("api") == "JoinGroup" and kind != "error":
                label = "JoinGroup + assignment"
            if heartbeat and not shown and self.hb_request is not None:
                request_key, request = self.hb_request
                self.hb_request = None
                if request_key == key and (self.hb_changed or kind == "error"):
                    self._arrow(*request)
                    shown = True
            if shown:
                self.pending_resp[key] = (pos, label, kind)
        elif name == "response_received":
            key = (str(e.get("node")), e.get("correlation_id"), e.get("api"))
            answered = self.pending_resp.pop(key, None)
            if answered is not None:
                at, label, kind = answered
                self._arrow(str(e.get("src")), at, str(e.get("node")), pos, label, kind)
        elif name == "zk_watch_fired":
            node = self.session_node.get(e.get("session_id"))
            if node is not None:
                self.watches.setdefault(node, []).append((pos, str(e.get("server"))))
        elif name == "zk_watch_received":
            node = str(e.get("node"))
            fired = self.watches.get(node)
            if fired:
                at, server = fired.pop(0)
                label = f"watch {e.get('type')} {_zk_path(e.get('path'))}"
                self._arrow(server, at, node, pos, label, "watch")
        elif name == "zk_ownership_conflict":
            # the leader refused the owner znode (NodeExists): drawn from it to the claimant
            topic, _, part = str(e.get("partition")).rpartition("-")
            label = f"NodeExists owners/{topic}/{part}"
            self._arrow("zk-0", pos, str(e.get("node")), pos, label, "error")
        elif name == "zk_txn":
            node = self.session_node.get(e.get("session_id"))
            path = str(e.get("path") or "")
            short = _zk_path(path).split("/")
            claim = (short[0] == "owners" and len(short) == 3) or (
                short[0] == "ids" and len(short) == 2
            )
            if node is not None and claim:
                op = str(e.get("op"))
                kind = "request" if op.startswith("create") else "revoke"
                self._arrow(node, pos, str(e.get("node")), pos, f"{op} {_zk_path(path)}", kind)

    def _arrow(self, src: str, a: float, dst: str, b: float, label: str, kind: str) -> None:
        i, j = self.lane_index.get(src), self.lane_index.get(dst)
        if i is None or j is None:
            return
        self.arrows.append([i, max(a, -0.5), j, max(b, a), label, kind])

    def _stall_ends(self, idx: int, t: int) -> None:
        if not self.stalls:
            return
        done = [s for s in self.stalls if s[0] <= t]
        if not done:
            return
        self.stalls = [s for s in self.stalls if s[0] > t]
        for _until, node in done:
            if node in self.stopped and self.client_state.get(node) not in _CLIENT_END.values():
                self.stopped.discard(node)
                self._refresh(idx, self._owned_by(node))

    def _machine_at(self) -> list[list[Any]]:
        """The state machine to draw from each step on, when the group changed type mid-run.

        An online upgrade (``group_upgraded``) turns a classic group into a consumer group and a
        downgrade (``group_downgraded``) back (Kafka's ``GroupMetadataManager``
        ``convertToConsumerGroup`` / ``convertToClassicGroup``, KIP-848): the states lit before
        and after belong to different machines. Empty when the type never changed.
        """
        if not self.machine_changes:
            return []
        first = CLASSIC if self.machine_changes[0][1] == CONSUMER else CONSUMER
        return [[0, first], *self.machine_changes]

    def _coordinator(self, e: Mapping[str, Any], idx: int) -> None:
        name = e.get("event")
        if name in ("group_upgraded", "group_downgraded"):
            self.machine_changes.append([idx, CONSUMER if name == "group_upgraded" else CLASSIC])
            return
        if name == "group_state_changed" or ("state_to" in e and "state_from" in e):
            reason = shorten_text(str(e.get("reason") or ""), self.names)
            gen = e.get("generation_id", e.get("group_epoch"))
            self.group_changes.append([idx, e.get("state_from"), e.get("state_to"), gen, reason])
            if name == "consumer_group_state_changed":
                self._info(idx, "group epoch", e.get("group_epoch"))
                self._info(idx, "target epoch", e.get("assignment_epoch"))
            elif isinstance(gen, int):
                self.info.append([idx, "generation", gen])
        elif name == "consumer_group_epoch_bumped":
            self._info(idx, "group epoch", e.get("group_epoch"))
        elif name == "consumer_group_target_assignment_computed":
            self._info(idx, "target epoch", e.get("assignment_epoch"))
            self._info(idx, "assignor", e.get("assignor"))
        elif name in ("consumer_group_member_joined", "consumer_group_member_removed"):
            node = self._node_of(e.get("member_id"))
            if node:
                if name == "consumer_group_member_joined":
                    self.in_group.add(node)
                else:
                    self.in_group.discard(node)
                    self.coord_member.pop(node, None)
                self.info.append([idx, "members", len(self.in_group)])
                self._member_row(idx, node)
        elif name == "consumer_group_member_updated":
            node = self._node_of(e.get("member_id"))
            if node:
                self.coord_member[node] = (
                    e.get("member_epoch"),
                    e.get("member_state"),
                    e.get("assigned"),
                    e.get("pending_revocation"),
                )
                self._member_row(idx, node)
        elif name == "server_assignment_computed":
            row = [-1] * len(self.partitions)
            self.gen_column = (e.get("generation_id"), row)
            self.generations.append([idx, e.get("generation_id"), row])
        elif name == "member_added":
            node = self._node_of(e.get("member_id"))
            if node:
                self.in_group.add(node)
                self.info.append([idx, "members", len(self.in_group)])
                self._member_row(idx, node)
        elif name == "member_replaced":
            old = self._node_of(e.get("previous_member_id"))
            node = self._node_of(e.get("member_id"))
            if old:
                self.in_group.discard(old)
                self._member_row(idx, old)
            if node:
                self.in_group.add(node)
                self._member_row(idx, node)
        elif name == "member_removed":
            node = self._node_of(e.get("member_id"))
            if node:
                self.in_group.discard(node)
                self.info.append([idx, "members", len(self.in_group)])
                self._member_row(idx, node)
        elif name == "leader_elected":
            before = self.leader
            self.leader = self._node_of(e.get("member_id"))
            self.info.append([idx, "leader", self.leader or "-"])
            for n in (before, self.leader):
                if n:
                    self._member_row(idx, n)
        elif name == "protocol_selected":
            self.info.append([idx, "protocol", e.get("protocol_name")])

    def _consumer(self, e: Mapping[str, Any], idx: int, node: str, name: str) -> None:
        if name.startswith("zk_"):
            self._zk_consumer(e, idx, node, name)
            return
        if name == "member_epoch_updated":
            self.client_epoch[node] = e.get("generation_id")  # type: ignore[assignment]
            self._member_row(idx, node)
        elif name == "assignment_received" and self.gen_column is not None:
            gen, row = self.gen_column
            if e.get("generation_id") == gen:
                for tp in e.get("partitions") or ():
                    i = self.partition_index.get(str(tp))
                    if i is not None:
                        row[i] = self.member_index.get(node, -1)
        if name == "client_state" and "state_to" in e:
            self.client_state[node] = str(e["state_to"])
            self._member_row(idx, node)
        elif name in _CLIENT_END:
            if name != "sim_consumer_crashed" or node not in self.stopped:
                self.client_state[node] = _CLIENT_END[name]
            self.stopped.add(node)
            self._refresh(idx, self._owned_by(node))
            self._member_row(idx, node)
        elif name == "consumer_started":
            # a new incarnation owns nothing: what the old one held is no one's now
            self.stopped.discard(node)
            mine = self._owned_by(node)
            for tp in mine:
                self._own(tp, None)
            self.client_state[node] = "UNSUBSCRIBED" if self.mode == CONSUMER else "UNJOINED"
            self._refresh(idx, mine)
            self._member_row(idx, node)
        elif name == "app_stalled":
            self.stopped.add(node)
            self.stalls.append((int(e.get("until_ms") or 0), node))
            self._refresh(idx, self._owned_by(node))
        elif name == "rebalance_callback":
            tps = [str(tp) for tp in e.get("partitions") or ()]
            if e.get("callback") == "assigned":
                for tp in tps:
                    self._own(tp, node)
                    self.had_owner.add(tp)
            else:
                for tp in tps:
                    if self.owner.get(tp) == node:
                        self._own(tp, None)
            self._refresh(idx, tps)
            self._member_row(idx, node)
        elif name == "assignment_computed" and isinstance(e.get("assignment"), dict):
            target: dict[str, str] = {}
            for mid, tps in e["assignment"].items():
                owner = self._node_of(mid) or str(mid)
                for tp in tps or ():
                    target[str(tp)] = owner
            changed = set(self.target) | set(target) | set(self.owner)
            self.target = target
            self.target_known = True
            self._refresh(idx, sorted(changed))
            gen = e.get("generation_id")
            row = [self.member_index.get(target.get(p, ""), -1) for p in self.partitions]
            self.generations.append([idx, gen, row])

    def _zk_consumer(self, e: Mapping[str, Any], idx: int, node: str, name: str) -> None:
        """A Kafka 0.8 consumer: what it fetches (from ``zk_rebalance_done`` until it releases)
        and what it is doing."""
        if name in _ZK_STATES:
            state = _ZK_STATES[name]
            if name == "zk_rebalance_attempt":
                state += f" (try {int(e.get('attempt') or 0) + 1})"
                self.zk_counts["attempts"] += 1
                self._info(idx, "rebalance attempts", self.zk_counts["attempts"])
            self.client_state[node] = state
        if name == "zk_rebalance_done":
            tps = [str(tp) for tp in e.get("partitions") or ()]
            for tp in tps:
                self._own(tp, node)
                self.had_owner.add(tp)
            self._refresh(idx, tps)
        elif name == "zk_partitions_released":
            tps = [str(tp) for tp in e.get("partitions") or ()]
            for tp in tps:
                if self.owner.get(tp) == node:
                    self._own(tp, None)
            self._refresh(idx, tps)
        elif name == "zk_ownership_conflict":
            self.zk_counts["conflicts"] += 1
            self._info(idx, "conflicts", self.zk_counts["conflicts"])
        elif name == "zk_watch_received":
            self.zk_counts["notifications"] += 1
            self._info(idx, "notifications", self.zk_counts["notifications"])
        elif name == "zk_assignment_computed" and isinstance(e.get("assignment"), dict):
            # the assignment this consumer computed from its server's view of the registry
            target: dict[str, str] = {}
            for thread, tps in e["assignment"].items():
                owner = self.zk_nodes.get(str(thread).rsplit("-", 1)[0], str(thread))
                for tp in tps or ():
                    target[str(tp)] = owner
            row = [self.member_index.get(target.get(p, ""), -1) for p in self.partitions]
            self.generations.append([idx, f"{node} #{int(e.get('attempt') or 0) + 1}", row])
        self._member_row(idx, node)

    def _callouts(self) -> None:
        steps = self.steps
        times = [s[0] for s in steps]

        def step_at(t_ms: int) -> int:
            # the last step at or before t (an expectation is checked after that instant's events)
            lo, hi = 0, len(times)
            while lo < hi:
                mid = (lo + hi) // 2
                if times[mid] <= t_ms:
                    lo = mid + 1
                else:
                    hi = mid
            return max(lo - 1, 0)

        for i, s in enumerate(steps):
            if s[3] == "note":
                self.callouts.append({"step": i, "kind": "note", "text": s[4][2:], "passed": None})
            elif s[3] == "violation":
                self.callouts.append(
                    {"step": i, "kind": "violation", "text": s[4], "passed": False}
                )
        for exp in self.result.expectations:
            failed = [c for c in exp.checks if not c.passed]
            detail = "; ".join(
                f"{c.check}: expected {_plain(c.expected)}, got {_plain(c.actual)}" for c in failed
            )
            at = exp.at_ms if exp.at_ms is not None else self.result.end_ms
            self.callouts.append(
                {
                    "step": step_at(at),
                    "kind": "expect",
                    "text": exp.label + (f" ({detail})" if detail else ""),
                    "passed": exp.passed,
                    "checks": len(exp.checks),
                }
            )
        if self.result.error:
            self.callouts.append(
                {
                    "step": max(len(steps) - 1, 0),
                    "kind": "violation",
                    "text": f"the run failed: {self.result.error}",
                    "passed": False,
                }
            )
        self.callouts.sort(key=lambda c: (c["step"], c["kind"] != "note"))


def build_view(
    scenario: Scenario,
    result: RunResult,
    *,
    group: str | None = None,
    verbose: bool = False,
    snapshots: Sequence[Snapshot] | None = None,
) -> dict[str, Any]:
    """The page's data: everything it shows, per step, computed from the run's event log and,
    for KIP-848 groups and the ZooKeeper design, the state snapshots taken while it ran
    (``scenarios.page_snapshots``). Without ``snapshots`` such a run is played again with them
    (deterministic: the same log, checked), so any caller holding a ``RunResult`` gets them."""
    if snapshots is None:
        snapshots = page_snapshots(scenario, result, group)
    return _Builder(scenario, result, group, verbose, snapshots).build()


def page_snapshots(scenario: Scenario, result: RunResult, group: str | None) -> list[Snapshot]:
    """The snapshots of ``result``'s run, from playing it again; none when the run needs none
    or the replay's log differs (a run cut short by an error)."""
    if not needs_snapshots(scenario) or result.error:
        return []
    again, snapshots = run_with_snapshots(
        scenario, until_ms=result.end_ms, seed=result.seed, group=group
    )
    if len(again.events) != len(result.events):
        return []
    return snapshots


def run_for_page(
    scenario: Scenario,
    *,
    until_ms: int | None = None,
    seed: int | None = None,
    group: str | None = None,
) -> tuple[RunResult, list[Snapshot]]:
    """Run a scenario for its page: ``run_scenario`` plus the snapshots when the page needs
    them (one run instead of two)."""
    if needs_snapshots(scenario):
        return run_with_snapshots(scenario, until_ms=until_ms, seed=seed, group=group)
    from scenarios.runner import run_scenario

    return run_scenario(scenario, until_ms=until_ms, seed=seed), []


def _asset(name: str) -> str:
    return resources.files("scenarios.web").joinpath(name).read_text(encoding="utf-8")


def render_html(view: Mapping[str, Any]) -> str:
    """One self-contained page: the template with the CSS, the JavaScript and the data inlined."""
    data = json.dumps(view, separators=(",", ":"), ensure_ascii=False)
    # inside <script>, "</script" would end the element early and "<!--" opens an HTML comment:
    # "<" only occurs inside JSON strings, where the escape \u003c reads back the same
    data = data.replace("<", "\\u003c")
    title = f"groupsim: {view.get('scenario', '')}"
    page = _asset("viewer.html")
    for key, value in (
        ("/*CSS*/", _asset("viewer.css")),
        ("/*JS*/", _asset("viewer.js")),
        ("/*DATA*/", data),
        ("TITLE", _escape(title)),
    ):
        page = page.replace(key, value, 1)
    return page


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def write_html(
    scenario: Scenario,
    result: RunResult,
    path: Path,
    *,
    group: str | None = None,
    verbose: bool = False,
    snapshots: Sequence[Snapshot] | None = None,
) -> Path:
    """Write the page for a run; returns the path written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    view = build_view(scenario, result, group=group, verbose=verbose, snapshots=snapshots)
    path.write_text(render_html(view), encoding="utf-8")
    return path


def simulation_view(
    sim: Simulation,
    *,
    name: str,
    description: str = "",
    source: str = "<simulation>",
    failure: str | None = None,
    group: str | None = None,
    verbose: bool = False,
) -> dict[str, Any]:
    """The page's data for a simulation built in Python (the pytest fixture), without a
    scenario file: the same fold over its event log. The consumers and their groups come from
    the simulation itself; ``failure`` (the failed test's message) is a callout at the last
    step, as a failed run's error is."""
    from scenarios.model import ClusterSpec, ConsumerSpec

    offsets_partitions = int(sim.cluster.config.offsets_topic_num_partitions)
    consumers = tuple(
        ConsumerSpec(id=cid, group=str(sim.consumer(cid).config.group_id))
        for cid in sim.consumer_ids
    )
    scenario = Scenario(
        name=name,
        description=description,
        cluster=ClusterSpec(
            brokers=len(sim.cluster.broker_nodes),
            config={"offsets_topic_num_partitions": offsets_partitions},
        ),
        consumers=consumers,
        source=source,
    )
    groups = tuple(
        GroupResult(
            group_id=gid,
            state=sim.group_state(gid),
            generation=sim.generation(gid),
            leader=sim.leader(gid),
            leader_member_id=sim.leader_member_id(gid),
            protocol=sim.protocol(gid),
            coordinator=sim.coordinator(gid),
            offsets_partition=partition_for(gid, offsets_partitions),
        )
        for gid in scenario.groups
    )
    result = RunResult(
        scenario=name,
        description=description,
        source=source,
        seed=sim.seed,
        end_ms=sim.now,
        groups=groups,
        invariant_violations=tuple(sim.violations),
        events=sim.events,
        error=failure,
    )
    return _Builder(scenario, result, group, verbose).build()


def write_simulation_html(sim: Simulation, path: Path, **kwargs: Any) -> Path:
    """Write the page of a simulation built in Python (``simulation_view``'s arguments)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(simulation_view(sim, **kwargs)), encoding="utf-8")
    return path


# --- the command (registered by scenarios.cli) --------------------------------------------------


def html(
    scenario: Annotated[str, typer.Argument(help="A scenario file or a library lesson name.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")] = Path(
        "run.html"
    ),
    seed: Annotated[
        int | None, typer.Option("--seed", help="Override the scenario's seed.")
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Stop at this simulated time, e.g. 30s.")
    ] = None,
    group: Annotated[
        str | None, typer.Option("--group", help="The group to show (default: the first).")
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Every event is a step (heartbeats included).")
    ] = False,
) -> None:
    """Write one self-contained HTML page that steps through the run in a browser.

    No server and no network: open the file, or attach it to a ticket. Link to a moment with
    #step=N. Exit 0 when the page is written (whether or not the expectations held), 2 on bad input.

    Example: groupsim html cooperative-two-rounds -o run.html
    """
    from scenarios.console import EXIT_INVALID, console, duration_option, print_scenario_error
    from scenarios.errors import ScenarioError
    from scenarios.loader import load_scenario

    until_ms = duration_option(until)
    try:
        s = load_scenario(scenario)
    except ScenarioError as err:
        print_scenario_error(err)
        raise typer.Exit(EXIT_INVALID) from None
    if group is not None and group not in s.groups:
        console(stderr=True).print(
            f"error: --group {group!r}: the scenario has groups {', '.join(s.groups) or 'none'}",
            markup=False,
        )
        raise typer.Exit(EXIT_INVALID)
    result, snapshots = run_for_page(s, until_ms=until_ms, seed=seed, group=group)
    write_html(s, result, output, group=group, verbose=verbose, snapshots=snapshots)
    view_steps = "passed" if result.passed else "FAILED"
    console().print(f"wrote {output} ({s.name}, expectations {view_steps})", markup=False)


def register(app: typer.Typer) -> None:
    app.command()(html)
