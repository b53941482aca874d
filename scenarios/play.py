"""Drives a Scenario through scenarios.simulation.Simulation (filled in as the runner lands)."""

from __future__ import annotations

from scenarios.model import Scenario
from scenarios.result import RunResult


def play(scenario: Scenario, *, until_ms: int | None = None, seed: int | None = None) -> RunResult:
    end = until_ms if until_ms is not None else scenario.end_ms
    return RunResult(
        scenario=scenario.name,
        description=scenario.description,
        source=scenario.source,
        seed=scenario.seed if seed is None else seed,
        end_ms=end,
        error="the simulation runner (scenarios.simulation) is not available yet",
    )
