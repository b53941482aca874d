"""``groupsim step``: replay a scenario one shown event at a time (filled in with the runner)."""

from __future__ import annotations

from rich.console import Console

from scenarios.model import Scenario


def step_through(
    console: Console, scenario: Scenario, *, group: str | None, interactive: bool, limit: int
) -> int:
    console.print("step: not available yet", markup=False)
    return 1
