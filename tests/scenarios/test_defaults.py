"""Defaults that must not mislead (issue 15): Python and YAML name clients alike, a run that
stops before a session timeout could show a late crash says so, and unowned partition time is
measured outside rebalances too."""

from __future__ import annotations

from scenarios.loader import load_scenario
from scenarios.report import settle_warning
from scenarios.runner import run_scenario
from scenarios.simulation import Simulation

YAML = """\
version: 1
name: same-group
cluster: {topics: {T1: 5}}
defaults: {partition.assignment.strategy: [range]}
consumers:
  - {id: zed, group: g, topics: [T1]}
  - {id: amy, group: g, topics: [T1]}
timeline: [{at: 0s, start: all}]
until: 20s
"""


def test_python_and_yaml_assign_the_same_way() -> None:
    # range orders members by member id, "<client.id>-<uuid>": with client.id = the consumer's
    # name in both, amy (sorted first) gets the extra partition in both
    from_yaml = run_scenario(load_scenario(YAML)).groups[0].assignment
    sim = Simulation(topics={"T1": 5}, seed=0)
    for name in ("zed", "amy"):
        sim.add_consumer(
            name, group_id="g", topics=["T1"], partition_assignment_strategy=["range"], start=True
        )
    assert sim.run_until_stable("g")
    from_python = {m: [str(tp) for tp in tps] for m, tps in sim.assignments("g").items()}
    assert from_python == {m: list(v) for m, v in from_yaml.items()}
    assert from_python["amy"] == ["T1-0", "T1-1", "T1-2"]
    explicit = Simulation(topics={"T1": 1}, seed=0)
    explicit.add_consumer("C1", group_id="g", topics=["T1"], client_id="mine")
    assert explicit.consumer("C1").config.client_id == "mine"


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


def test_unowned_time_in_the_json_result_matches_the_report(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from scenarios.cli import app
    from scenarios.report import unowned_lines

    result = run_scenario(load_scenario(STATIC_CLOSE))
    (group,) = result.groups
    assert 10_000 <= group.unowned_partition_ms < 10_100
    assert group.unowned_in_rebalances_partition_ms == 0
    (line,) = unowned_lines(result)
    assert f"{group.unowned_partition_ms / 1000:.1f} partition-s in all" in line
    path = tmp_path / "static-close.yaml"
    path.write_text(STATIC_CLOSE, encoding="utf-8")
    out = CliRunner().invoke(app, ["run", "--json", str(path)])
    (doc,) = json.loads(out.stdout)["groups"]
    assert doc["unowned_partition_ms"] == group.unowned_partition_ms
    assert doc["unowned_in_rebalances_partition_ms"] == 0


def test_unowned_time_inside_rebalances_is_part_of_the_total() -> None:
    crash = STATIC_CLOSE.replace("static: true", "static: false").replace(
        "  - {at: 20s, close: C0}\n  - {at: 25s, start: C0}\n", "  - {at: 20s, crash: C0}\n"
    )
    result = run_scenario(load_scenario(crash.replace("until: 40s", "until: 70s")))
    (group,) = result.groups
    inside = sum(r["paused_partition_ms"] for r in result.rebalances)
    assert group.unowned_in_rebalances_partition_ms == inside > 0
    # C0's two partitions: unowned from the crash (20 s) until reassigned after its session
    # (30 s from its last heartbeat, at most 3 s before the crash) expired; the rebalance window
    # is only the tail of that
    assert group.unowned_partition_ms > inside
    assert 2 * 27_000 <= group.unowned_partition_ms < 2 * 31_000
