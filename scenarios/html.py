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
* ``callouts``: narration, expectations (pass/fail at their step) and invariant violations.
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
from scenarios.report import describe_event, member_names, shorten_text
from scenarios.result import GroupResult, RunResult, _plain

if TYPE_CHECKING:
    from scenarios.simulation import Simulation

VIEW_VERSION = 1
#: partition status codes in ``cells`` (the page's legend uses the same order)
STATUS = ("unowned", "owned", "moving", "revoked", "paused")
UNOWNED, OWNED, MOVING, REVOKED, PAUSED = range(len(STATUS))
GROUP_STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead")
_DEAD_EVENTS = ("sim_consumer_crashed", "consumer_crashed", "consumer_fatal")
_CLIENT_END = {
    "consumer_crashed": "CRASHED",
    "sim_consumer_crashed": "CRASHED",
    "consumer_closed": "CLOSED",
    "consumer_fatal": "FAILED",
}


def _kind(e: Mapping[str, Any], style: str) -> str:
    """A CSS class for a step: what sort of line it is."""
    name = str(e.get("event", ""))
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
    if name == "group_state_changed":
        return "group"
    if name == "client_state":
        return "client"
    if name == "rebalance_callback":
        return "callback"
    if name in ("request_received", "scenario_raw_sent"):
        return "request"
    if name == "response_sent":
        return "error" if "red" in style else "response"
    return "error" if "red" in style else "other"


def _tp_key(tp: str) -> tuple[str, int]:
    topic, _, part = tp.rpartition("-")
    return (topic, int(part)) if part.isdigit() else (tp, -1)


class _Builder:
    """Folds the event log into the page's step-indexed data (one pass, no look-ahead)."""

    def __init__(self, scenario: Scenario, result: RunResult, group: str | None, verbose: bool):
        self.scenario = scenario
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
        brokers = {f"broker-{i}" for i in range(scenario.cluster.brokers)}
        consumers = set(self.consumer_ids)
        others: dict[str, None] = {}
        parts: set[str] = set()
        for e in events:
            for key in ("node", "src", "dst"):
                n = e.get(key)
                if not isinstance(n, str) or n in consumers or n in ("", "-", "scenario"):
                    continue
                if n.startswith("broker-"):
                    brokers.add(n)
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
            elif name == "assignment_computed" and isinstance(e.get("assignment"), dict):
                for tps in e["assignment"].values():
                    parts.update(str(tp) for tp in tps or ())
        self.lanes: list[dict[str, str]] = [
            {"id": b, "kind": "broker"} for b in sorted(brokers, key=_tp_key)
        ]
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

    # -- helpers --------------------------------------------------------------------------

    def _node_of(self, member_id: Any) -> str | None:
        if not isinstance(member_id, str) or not member_id:
            return None
        return self.names.get(member_id) or shorten_text(member_id, self.names)

    def _status(self, tp: str) -> int:
        owner = self.owner.get(tp)
        if owner is None:
            return REVOKED if tp in self.had_owner else UNOWNED
        if owner in self.stopped:
            return PAUSED
        # the newest computed assignment gives it to another member, or (cooperative round 1)
        # to nobody yet: its owner is about to revoke it
        if self.target_known and self.target.get(tp) != owner:
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
        row = (
            self.client_state.get(node, "-"),
            1 if node in self.in_group else 0,
            len(self.owns.get(node, ())),
            1 if self.leader == node else 0,
        )
        if self.row_shown.get(node) != row:
            self.row_shown[node] = row
            self.member_rows.append([idx, i, *row])

    def _pos(self, idx: int, is_step: bool) -> float:
        return float(idx) if is_step else idx - 0.5

    # -- the fold -------------------------------------------------------------------------

    def build(self) -> dict[str, Any]:
        for e in self.result.events:
            self._event(e)
        last = max(len(self.steps) - 1, 0)
        for stream in (self.group_changes, self.info, self.member_rows, self.cells):
            for row in stream:
                row[0] = min(row[0], last)
        for row in self.generations:
            row[0] = min(row[0], last)
        for arrow in self.arrows:
            arrow[1] = min(arrow[1], last)
            arrow[3] = min(arrow[3], last)
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
            "status_names": list(STATUS),
            "group_states": list(GROUP_STATES),
            "lanes": self.lanes,
            "members": self.members,
            "partitions": self.partitions,
            "steps": self.steps,
            "arrows": self.arrows,
            "group": self.group_changes,
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

    def _event(self, e: Mapping[str, Any]) -> None:
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
        pos = self._pos(idx, is_step)
        if name == "request_sent":
            self.pending_req[(str(e.get("node")), e.get("correlation_id"), e.get("api"))] = pos
        elif name == "request_received":
            src = str(e.get("src"))
            sent = self.pending_req.pop((src, e.get("correlation_id"), e.get("api")), None)
            if sent is None:
                sent = pos
            if is_step:
                self._arrow(src, sent, str(e.get("node")), pos, f"{e.get('api')}", "request")
        elif name == "response_sent":
            key = (str(e.get("dst")), e.get("correlation_id"), e.get("api"))
            error = e.get("error")
            kind = "response" if error in (None, "NONE") else "error"
            label = f"{e.get('api')} {error}" if kind == "error" else f"{e.get('api')}"
            if is_step:
                self.pending_resp[key] = (pos, label, kind)
        elif name == "response_received":
            key = (str(e.get("node")), e.get("correlation_id"), e.get("api"))
            answered = self.pending_resp.pop(key, None)
            if answered is not None:
                at, label, kind = answered
                self._arrow(str(e.get("src")), at, str(e.get("node")), pos, label, kind)

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

    def _coordinator(self, e: Mapping[str, Any], idx: int) -> None:
        name = e.get("event")
        if name == "group_state_changed" or ("state_to" in e and "state_from" in e):
            reason = shorten_text(str(e.get("reason") or ""), self.names)
            gen = e.get("generation_id")
            self.group_changes.append([idx, e.get("state_from"), e.get("state_to"), gen, reason])
            if isinstance(gen, int):
                self.info.append([idx, "generation", gen])
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
            self.client_state[node] = "UNJOINED"
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
    scenario: Scenario, result: RunResult, *, group: str | None = None, verbose: bool = False
) -> dict[str, Any]:
    """The page's data: everything it shows, per step, computed from the run's event log."""
    return _Builder(scenario, result, group, verbose).build()


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
) -> Path:
    """Write the page for a run; returns the path written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        render_html(build_view(scenario, result, group=group, verbose=verbose)), encoding="utf-8"
    )
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
    from scenarios.runner import run_scenario

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
    result = run_scenario(s, until_ms=until_ms, seed=seed)
    write_html(s, result, output, group=group, verbose=verbose)
    view_steps = "passed" if result.passed else "FAILED"
    console().print(f"wrote {output} ({s.name}, expectations {view_steps})", markup=False)


def register(app: typer.Typer) -> None:
    app.command()(html)
