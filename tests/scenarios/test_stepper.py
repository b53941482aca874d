from __future__ import annotations

import io

from rich.console import Console

from scenarios.loader import load_scenario
from scenarios.stepper import step_through

SCENARIO = """\
version: 1
name: s
cluster: {topics: {T1: 2}}
defaults: {session.timeout.ms: 10s, partition.assignment.strategy: [range]}
consumers:
  - {count: 2, first: 1, id: "C{i}", group: g1, topics: [T1]}
timeline:
  - {at: 0s, start: all}
expect:
  - {state: Stable}
"""


def _console() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=200, color_system=None), buf


def test_interactive_stepping_waits_for_enter_and_stops_on_q():
    console, buf = _console()
    answers = iter(["", "", "q"])
    code = step_through(
        console,
        load_scenario(SCENARIO),
        group=None,
        interactive=True,
        limit=1000,
        ask=lambda: next(answers),
    )
    out = buf.getvalue()
    assert code == 0
    assert "3 events shown" in out


def test_the_world_follows_the_log():
    console, buf = _console()
    step_through(console, load_scenario(SCENARIO), group="g1", interactive=False, limit=1000)
    out = buf.getvalue()
    assert "[g1: PreparingRebalance, generation 0, leader C1, members C1" in out
    assert "[g1: Stable, generation 1, leader C1, members C1, C2]" in out
    assert "C1:STABLE[T1-0]  C2:STABLE[T1-1]" in out
    assert "Empty > PreparingRebalance > [CompletingRebalance] > Stable" in out


KIP848 = """\
version: 1
name: step-kip848
cluster: {topics: {T1: 2}}
defaults: {group.protocol: consumer}
consumers:
  - {count: 2, first: 1, id: "C{i}", group: g1, topics: [T1]}
timeline:
  - {at: 0s, start: all}
until: 15s
"""


def test_a_kip848_group_shows_the_group_epoch_and_each_member_epoch():
    console, buf = _console()
    step_through(console, load_scenario(KIP848), group="g1", interactive=False, limit=1000)
    out = buf.getvalue()
    assert "[g1: Stable, group epoch 2]  C1:STABLE@2[T1-0]  C2:STABLE@2[T1-1]" in out
    assert "C1:JOINING@0[]" in out
