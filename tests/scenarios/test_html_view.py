"""``groupsim html``'s data (scenarios/html.py): every value the page shows, checked against the
run it came from (its event log and its RunResult)."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import pytest
from typer.testing import CliRunner

from scenarios.cli import app
from scenarios.history import rebalances_from_events
from scenarios.html import STATUS, build_view, render_html
from scenarios.loader import load_scenario
from scenarios.report import timeline_lines
from scenarios.runner import run_scenario


@cache
def _run(lesson: str) -> tuple[Any, Any, dict[str, Any]]:
    scenario = load_scenario(lesson)
    result = run_scenario(scenario)
    return scenario, result, build_view(scenario, result)


def _owners_at(view: dict[str, Any], step: int) -> dict[str, tuple[str | None, str]]:
    """The grid's 'now' column at a step: partition -> (owner, status)."""
    owner = dict.fromkeys(view["partitions"])
    status = dict.fromkeys(view["partitions"], "unowned")
    for at, p, o, s in view["cells"]:
        if at > step:
            break
        tp = view["partitions"][p]
        owner[tp] = view["members"][o] if o >= 0 else None
        status[tp] = STATUS[s]
    return {tp: (owner[tp], status[tp]) for tp in view["partitions"]}


def _step_of(view: dict[str, Any], text: str, after: int = 0) -> int:
    return next(i for i, s in enumerate(view["steps"]) if i >= after and text in s[4])


@pytest.mark.parametrize("lesson", ["cooperative-two-rounds", "demo-what-is-a-rebalance"])
def test_steps_are_the_terminal_timeline(lesson):
    scenario, result, view = _run(lesson)
    lines = timeline_lines(
        result.events,
        [c.id for c in scenario.consumers],
        partitions=frozenset(g.offsets_partition for g in result.groups),
    )
    assert [(s[0], s[4]) for s in view["steps"]] == [(t, text) for t, text, _ in lines]


@pytest.mark.parametrize("lesson", ["cooperative-two-rounds", "demo-what-is-a-rebalance"])
def test_group_transitions_follow_the_log(lesson):
    _, result, view = _run(lesson)
    gid = view["group_id"]
    logged = [
        (e["state_from"], e["state_to"], e.get("generation_id"))
        for e in result.events
        if e.get("event") == "group_state_changed" and e.get("group_id") == gid
    ]
    assert [(c[1], c[2], c[3]) for c in view["group"]] == logged
    # each transition is shown at the step of its own timeline line, with its cause
    for step, _, to, gen, cause in view["group"]:
        assert f"-> {to} (generation {gen})" in view["steps"][step][4]
        assert cause and cause in view["steps"][step][4]


@pytest.mark.parametrize("lesson", ["cooperative-two-rounds", "demo-what-is-a-rebalance"])
def test_owners_at_the_last_step_are_the_final_assignment(lesson):
    _, result, view = _run(lesson)
    final = _owners_at(view, len(view["steps"]) - 1)
    expected = {
        tp: consumer
        for consumer, tps in result.group(view["group_id"]).assignment.items()
        for tp in tps
    }
    assert {tp: o for tp, (o, _) in final.items() if o} == expected
    assert {s for _, s in final.values()} == {"owned"}


def test_cooperative_round_one_marks_the_moving_partitions_then_revoked_then_owned():
    _, _, view = _run("cooperative-two-rounds")
    gen2 = next(g for g in view["generations"] if g[1] == 2)
    moving = {view["partitions"][p] for p, o in enumerate(gen2[2]) if o < 0}
    assert len(moving) == 2  # round 1 hands the two partitions C3 will get to nobody
    at = _owners_at(view, gen2[0])
    assert {tp for tp, (_, s) in at.items() if s == "moving"} == moving
    assert all(at[tp][0] in ("C1", "C2") for tp in moving)  # still consumed by their old owner
    revoke = _step_of(view, "onPartitionsRevoked(T1-", after=gen2[0])
    revoked = view["steps"][revoke][4].split("(")[1].rstrip(")")
    assert _owners_at(view, revoke)[revoked] == (None, "revoked")
    end = _owners_at(view, len(view["steps"]) - 1)
    assert {end[tp][0] for tp in moving} == {"C3"}
    # only those two ever stopped: the four others stay owned throughout the rebalance
    for step in range(gen2[0], len(view["steps"])):
        stopped = {tp for tp, (_, s) in _owners_at(view, step).items() if s != "owned"}
        assert stopped <= moving


def test_eager_rebalance_revokes_everything_before_the_new_assignment():
    _, result, view = _run("demo-what-is-a-rebalance")
    # C3 starts at 20 s: eager range revokes all six partitions before rejoining
    prep = next(c[0] for c in view["group"] if c[2] == "PreparingRebalance" and c[3] == 1)
    rebalance = [r for r in rebalances_from_events(result.events) if r.generation_id == 2]
    assert rebalance and rebalance[0].partitions_revoked == 6
    stable = next(c[0] for c in view["group"] if c[2] == "Stable" and c[0] > prep)
    statuses = [{s for _, s in _owners_at(view, step).values()} for step in range(prep, stable + 1)]
    assert any(s == {"revoked"} for s in statuses)


def test_members_rows_and_group_info_follow_the_run():
    _, result, view = _run("demo-what-is-a-rebalance")
    last = {}
    for row in view["member_rows"]:
        last[view["members"][row[1]]] = row
    group = result.group(view["group_id"])
    in_group = {m for m, r in last.items() if r[3]}
    assert in_group == {m.consumer for m in group.members}
    assert {m for m, r in last.items() if r[5]} == {group.leader}
    for m in group.members:
        assert last[m.consumer][2] == m.client_state
        assert last[m.consumer][4] == len(m.assignment)
    assert last["C1"][2] == "CLOSED"
    info = {k: v for _, k, v in view["info"]}
    assert info["generation"] == group.generation and info["leader"] == group.leader


def test_callouts_sit_at_their_steps():
    scenario, result, view = _run("demo-what-is-a-rebalance")
    notes = [c for c in view["callouts"] if c["kind"] == "note"]
    assert [c["text"] for c in notes] == [a.note for a in scenario.timeline if a.note is not None]
    assert len(notes) == 3
    for c in notes:
        assert view["steps"][c["step"]][3] == "note"
    expects = [c for c in view["callouts"] if c["kind"] == "expect"]
    assert len(expects) == len(result.expectations)
    times = [s[0] for s in view["steps"]]
    for c, exp in zip(expects, sorted(result.expectations, key=lambda e: e.at_ms), strict=True):
        assert c["passed"] == exp.passed
        assert times[c["step"]] <= exp.at_ms
        assert c["step"] == len(times) - 1 or times[c["step"] + 1] > exp.at_ms


def test_a_failed_expectation_says_what_was_expected():
    scenario = load_scenario(
        "version: 1\nname: wrong\ncluster: {topics: {T1: 2}}\n"
        "consumers: [{id: C1, group: g, topics: [T1]}]\n"
        "timeline: [{at: 0s, start: C1}]\n"
        "expect: [{at: 10s, state: Stable, generation: 7}]\n"
    )
    view = build_view(scenario, run_scenario(scenario))
    (callout,) = [c for c in view["callouts"] if c["kind"] == "expect"]
    assert callout["passed"] is False
    assert "generation: expected 7, got 1" in callout["text"]
    assert view["passed"] is False


def test_the_page_is_self_contained_and_its_data_cannot_close_the_script():
    view = _run("cooperative-two-rounds")[2]
    hostile = dict(view, description="</script><script>alert(1)</script><!-- x")
    page = render_html(hostile)
    assert page.count("</script>") == 2  # the data's and the viewer's own
    data = re.search(r'id="groupsim-data">(.*?)</script>', page, re.S)
    assert data and json.loads(data.group(1))["description"] == hostile["description"]
    # nothing is fetched: no external scripts, styles, images or fonts
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "@import" not in page and "url(http" not in page
    assert re.findall(r"https?://[^\s'\"]+", page) == ["http://www.w3.org/2000/svg"] * 3


runner = CliRunner()


def test_html_command_writes_the_page(tmp_path):
    out = tmp_path / "run.html"
    res = runner.invoke(app, ["html", "cooperative-two-rounds", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert f"wrote {out}" in res.output
    page = out.read_text()
    assert "<title>groupsim: cooperative-two-rounds</title>" in page
    assert '"scenario":"cooperative-two-rounds"' in page


def test_run_html_writes_the_same_page(tmp_path):
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    assert runner.invoke(app, ["html", "seed003-range", "-o", str(a)]).exit_code == 0
    res = runner.invoke(app, ["run", "seed003-range", "--quiet", "--html", str(b)])
    assert res.exit_code == 0, res.output
    assert a.read_bytes() == b.read_bytes()


def test_html_bad_input_exits_2_without_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nname: x\nconsumers: [{id: C1}]\n")
    res = runner.invoke(app, ["html", str(bad), "-o", str(tmp_path / "x.html")])
    assert res.exit_code == 2
    assert "bad.yaml:3" in res.output and "Traceback" not in res.output
    res = runner.invoke(
        app, ["html", "seed003-range", "--group", "nope", "-o", str(tmp_path / "y")]
    )
    assert res.exit_code == 2 and "--group 'nope'" in res.output
    assert not (tmp_path / "x.html").exists() and not (tmp_path / "y").exists()


@pytest.mark.parametrize("lesson", ["cooperative-two-rounds", "incident-static-leave-on-close"])
def test_a_simulation_built_in_python_gets_the_same_page_as_its_scenario(lesson: str) -> None:
    """The pytest plugin's page for a fixture-built simulation (simulation_view) is the same fold
    of the same event log: run the lesson's steps on a Simulation and compare every view field
    with the scenario's page, but for the expectations, which a fixture test does not have."""
    from scenarios.html import simulation_view
    from scenarios.play import Player

    scenario, _result, view = _run(lesson)
    player = Player(scenario)
    player.play(None, None)
    built = simulation_view(
        player.sim, name=scenario.name, description=scenario.description, source=scenario.source
    )
    assert built.keys() == view.keys()
    for key in view:
        if key not in ("callouts", "measures"):
            assert built[key] == view[key], key
    # the measures are the scenario run's (per timeline step); a fixture's simulation has none
    assert built["measures"] == [] and view["measures"]
    # callouts: the notes are there; the expectations are the scenario's own
    assert built["callouts"] == [c for c in view["callouts"] if c["kind"] != "expect"]
    assert built["steps"] and len(built["lanes"]) == len(view["lanes"])


def test_the_consumer_group_machine_draws_every_derived_transition() -> None:
    """ConsumerGroup.maybeUpdateGroupState derives the state afresh, so any live state can follow
    any other; each such step must have an arrow to light on the page."""
    from itertools import permutations

    from coordinator.consumer_group import ConsumerGroupState
    from scenarios.html import CONSUMER, MACHINES

    machine = MACHINES[CONSUMER]
    live = [str(s) for s in ConsumerGroupState if s is not ConsumerGroupState.DEAD]
    drawn = {(a, b) for a, b, _ in machine["edges"]}
    assert set(permutations(live, 2)) <= drawn
    assert {a for a, _ in drawn} | {b for _, b in drawn} <= set(machine["states"])
