"""Run a validated scenario on the simulator and check its expectations.

``run_scenario(scenario, *, until_ms=None, seed=None) -> RunResult`` is the one entry point used
by ``groupsim run``, the lesson tests and the Spark sweeps (on executors: it must stay importable
without pyspark and must never raise for a bad run; simulator failures land in ``RunResult.error``).
"""

from __future__ import annotations

from collections.abc import Callable

from scenarios.model import Scenario
from scenarios.result import RunResult


def run_scenario(
    scenario: Scenario,
    *,
    until_ms: int | None = None,
    seed: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RunResult:
    """Build the simulation, play the timeline, evaluate expectations at their times and at the end.

    ``progress(now_ms, end_ms)`` (optional) is called after every simulated minute, for a display;
    the events are the same with or without it.
    """
    from scenarios.play import play  # the driver; kept apart so this module stays tiny to import

    player_class = None
    if scenario.design == "zookeeper":  # seed 004's design 1: Kafka 0.8 on ZooKeeper
        from scenarios.zk_play import ZkPlayer

        player_class = ZkPlayer
    return play(
        scenario, until_ms=until_ms, seed=seed, progress=progress, player_class=player_class
    )
