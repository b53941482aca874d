"""Defaults that must not mislead (issue 15): a run that stops before a session timeout could
show a late crash says so; unowned partition time is measured outside rebalances too.

(The Python/YAML client_id test belongs with commit 85c315e, held back on main until it is
re-applied.)"""

from __future__ import annotations

from scenarios.loader import load_scenario
from scenarios.report import settle_warning
from scenarios.runner import run_scenario

LATE_CRASH = """\
version: 1
name: late-crash
cluster: {topics: {T1: 2}}
consumers: [{count: 2, id: "C{i}", group: g, topics: [T1]}]
timeline:
  - {at: 0s, start: all}
  - {at: 20s, crash: C0}
"""


def test_default_until_before_a_session_timeout_is_noted() -> None:
    s = load_scenario(LATE_CRASH)
    note = settle_warning(s)
    assert note is not None and "before session.timeout.ms (45.000s)" in note
    assert "after the crash at 20.000s" in note and "past 75.000s" in note
    assert settle_warning(s, until_ms=90_000) is None  # --until chosen
    assert settle_warning(load_scenario(LATE_CRASH + "until: 50s\n")) is None
    short = LATE_CRASH.replace("consumers: [", "defaults: {session.timeout.ms: 10s}\nconsumers: [")
    assert settle_warning(load_scenario(short)) is None  # 20 s + 10 s < 50 s: seen


STATIC_CLOSE = """\
version: 1
name: static-close
cluster: {topics: {T1: 4}}
defaults: {partition.assignment.strategy: [range], session.timeout.ms: 30s}
consumers: [{count: 2, id: "C{i}", group: g, topics: [T1], static: true}]
timeline:
  - {at: 0s, start: all}
  - {at: 20s, close: C0}
  - {at: 25s, start: C0}
until: 40s
"""


def test_unowned_partition_time_outside_rebalances() -> None:
    from scenarios.history import unowned_partition_ms
    from scenarios.report import unowned_lines

    result = run_scenario(load_scenario(STATIC_CLOSE))
    assert len(result.rebalances) == 1  # the static close and restart cause no rebalance
    assert result.rebalances[0]["paused_partition_ms"] == 0
    unowned = unowned_partition_ms(result.events, result.end_ms)["g"]
    assert 10_000 <= unowned < 10_100  # C0's two partitions, from its close to its return
    (line,) = unowned_lines(result)
    assert line == (
        "group g: partitions without an owner 10.0 partition-s in all, "
        "0.0 partition-s of it inside rebalances"
    )


def test_a_crash_counts_until_the_partitions_are_reassigned_or_the_end() -> None:
    from scenarios.history import unowned_partition_ms

    events = [
        {"t_ms": 0, "event": "rebalance_callback", "node": "A", "group_id": "g",
         "callback": "assigned", "partitions": ["t-0", "t-1"]},
        {"t_ms": 1000, "event": "sim_consumer_crashed", "node": "A"},
        {"t_ms": 4000, "event": "rebalance_callback", "node": "B", "group_id": "g",
         "callback": "assigned", "partitions": ["t-0"]},
    ]  # fmt: skip
    assert unowned_partition_ms(events, 10_000) == {"g": 3000 + 9000}
    assert unowned_partition_ms(events) == {"g": 3000 + 3000}
