"""Seed 004's measures of a rebalance design, as a view of the event log.

``design_measures(events, topics, steps)`` reads one run's events (as ``sim.events`` holds them or
a JSON-lines log gives them back) and answers, the same way for every design:

* ``notifications``: how many times a consumer was told the group changed. ZooKeeper: watch
  notifications delivered (``zk_watch_received``). Coordinator: responses carrying
  ``REBALANCE_IN_PROGRESS`` (a heartbeat, commit or sync told the member to rejoin).
* ``rebalance_attempts``: how many times an assignment was computed. ZooKeeper: every
  ``syncedRebalance`` try of every consumer (``zk_rebalance_attempt``). Coordinator: the
  leader's assignor runs (``assignment_computed``), or in design 2 the coordinator's
  (``server_assignment_computed``).
* ``conflicts`` (owner znodes another consumer still held), ``retries`` (tries after the first),
  ``failed_rebalances`` (``zk_rebalance_failed``; with a coordinator, fatal consumer errors).
* ``settle_ms``: per timeline step, how long until every partition had exactly one live owner
  for good (until the next step, or the end): the last change of ownership that made it so,
  minus the step's time; ``None`` when it never did in that window.
* ``unowned``: ``[t_ms, partitions without a live owner]`` at every change, and
  ``unowned_partition_ms``, its integral over the run.

Ownership is who *fetches* a partition: ZooKeeper consumers from ``zk_rebalance_done`` until they
release (``zk_partitions_released``, a failed try, a renewed session's ``resetState``, close,
crash); classic consumers from the ``assigned`` callback until ``revoked``/``lost``, close or
crash.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from coordinator import events as ev

_CLEARS = {
    ev.ZK_PARTITIONS_RELEASED,
    ev.ZK_REBALANCE_ATTEMPT_FAILED,
    ev.ZK_NEW_SESSION,
    ev.CONSUMER_CRASHED,
    ev.CONSUMER_CLOSED,
    ev.SIM_CONSUMER_CRASHED,
}


def _bad(owners: Mapping[str, set[str]], partitions: Iterable[str]) -> tuple[int, int]:
    """(partitions without owner, partitions with two or more)."""
    none = multi = 0
    for p in partitions:
        n = len(owners.get(p, ()))
        none += n == 0
        multi += n > 1
    return none, multi


def design_measures(
    events: Sequence[Mapping[str, Any]],
    topics: Mapping[str, int],
    steps: Sequence[int],
    end_ms: int,
) -> dict[str, Any]:
    counts = {"notifications": 0, "rebalance_attempts": 0, "conflicts": 0, "retries": 0}
    failed = 0
    sizes = dict(topics)
    held: dict[str, set[str]] = {}  # consumer -> partitions it fetches
    series: list[tuple[int, int, int]] = []  # (t, unowned, multi) at each change

    def partitions() -> list[str]:
        return [f"{t}-{p}" for t, n in sizes.items() for p in range(n)]

    def record(t: int) -> None:
        owners: dict[str, set[str]] = {}
        for node, parts in held.items():
            for p in parts:
                owners.setdefault(p, set()).add(node)
        none, multi = _bad(owners, partitions())
        if series and series[-1][0] == t:
            series[-1] = (t, none, multi)
        elif not series or series[-1][1:] != (none, multi):
            series.append((t, none, multi))

    record(0)
    for e in events:
        name, t, node = e.get("event"), int(e.get("t_ms", 0)), str(e.get("node"))
        told = name == ev.RESPONSE_RECEIVED and e.get("error") == "REBALANCE_IN_PROGRESS"
        if name == ev.ZK_WATCH_RECEIVED or told:
            counts["notifications"] += 1
        elif name == ev.ZK_REBALANCE_ATTEMPT:
            counts["rebalance_attempts"] += 1
            counts["retries"] += int(e.get("attempt", 0)) > 0
        elif name in (ev.ASSIGNMENT_COMPUTED, ev.SERVER_ASSIGNMENT_COMPUTED):
            counts["rebalance_attempts"] += 1
        elif name == ev.ZK_OWNERSHIP_CONFLICT:
            counts["conflicts"] += 1
        elif name in (ev.ZK_REBALANCE_FAILED, ev.CONSUMER_FATAL):
            failed += 1
        if name in (ev.SIM_PARTITIONS_ADDED, ev.SIM_TOPIC_CREATED):
            sizes[str(e["topic"])] = int(e["partitions"])
            record(t)
        elif name == ev.ZK_REBALANCE_DONE:
            held[node] = set(e.get("partitions") or ())
            record(t)
        elif name in _CLEARS:
            held[node] = set()
            record(t)
        elif name == ev.REBALANCE_CALLBACK:
            parts = set(e.get("partitions") or ())
            if e.get("callback") == "assigned":
                held[node] = held.get(node, set()) | parts
            else:
                held[node] = held.get(node, set()) - parts
            record(t)
    return {
        **counts,
        "failed_rebalances": failed,
        "settle_ms": _settle(series, steps, end_ms),
        "unowned": [[t, n] for t, n, _ in _changes(series)],
        "unowned_partition_ms": _integral(series, end_ms),
    }


def _changes(series: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    out: list[tuple[int, int, int]] = []
    for row in series:
        if not out or out[-1][1] != row[1]:
            out.append(row)
    return out


def _integral(series: list[tuple[int, int, int]], end_ms: int) -> int:
    total = 0
    for (t, n, _), nxt in zip(series, [*series[1:], (end_ms, 0, 0)], strict=True):
        total += n * max(0, min(nxt[0], end_ms) - t)
    return total


def _settle(
    series: list[tuple[int, int, int]], steps: Sequence[int], end_ms: int
) -> list[dict[str, int | None]]:
    out: list[dict[str, int | None]] = []
    times = sorted(set(steps))
    for i, t in enumerate(times):
        window_end = times[i + 1] if i + 1 < len(times) else end_ms
        state = [row for row in series if row[0] <= t][-1:]  # the state as the step happens
        inside = [row for row in series if t < row[0] < window_end]
        last = (inside or state)[-1] if (inside or state) else (t, 0, 0)
        ok = last[1] == 0 and last[2] == 0
        after = (max(last[0], t) - t) if ok else None
        out.append({"at_ms": t, "after_ms": after})
    return out
