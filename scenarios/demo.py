"""``groupsim demo``: a newcomer's one-minute tour of what a rebalance is, told by lessons."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.text import Text

from scenarios.errors import ScenarioError

#: the tour, in order: one group forming, one member dying, and the cooperative alternative
TOUR = (
    "demo-what-is-a-rebalance",
    "seed003-sticky-member-leaves",
    "cooperative-two-rounds",
)
INTRO = """\
A Kafka consumer group shares the partitions of its topics among its members: each partition is
read by exactly one member. When members come or go (or partitions are added), the group
REBALANCES: the coordinator (a broker) stops the world, every member sends JoinGroup, one member
(the leader) computes a new assignment with the chosen assignor, and SyncGroup hands it out.
Each rebalance bumps the group's GENERATION. Below, lessons from scenarios/library run on the
simulator; read the timeline top to bottom (times are simulated)."""


def run_demo(console: Console, lessons: list[str] | None = None) -> int:
    from scenarios.loader import load_scenario
    from scenarios.report import render_run
    from scenarios.runner import run_scenario

    console.print(Text("groupsim: what is a rebalance?", style="bold"))
    console.print(INTRO, markup=False)
    console.print()
    code = 0
    for name in lessons or list(TOUR):
        try:
            scenario = load_scenario(name)
        except ScenarioError as err:
            console.print(err.format(), markup=False, style="red")
            code = 2
            continue
        result = run_scenario(scenario)
        render_run(console, scenario, result, brief=True)
        console.print()
        if not result.passed:
            code = max(code, 1)
    console.print(
        "The whole protocol of a lesson (JoinGroup/SyncGroup, errors, rebalance callbacks): "
        "`groupsim run <name>`; one event at a time: `groupsim step <name>`; every lesson: "
        "`groupsim lessons`.",
        markup=False,
    )
    report = _pipeline_report()
    if report is not None:
        console.print(
            f"The Spark pipeline's example report (many scenario variants swept at once): {report}",
            markup=False,
        )
    else:
        sweeps = sorted((_ROOT / "pipeline" / "examples").glob("*.yaml"))
        if sweeps:
            console.print(
                "The Spark pipeline sweeps many variants of a scenario at once: "
                f"`groupsim sweep {sweeps[0].relative_to(_ROOT)} --out /tmp/sweep`, then "
                "`groupsim sweep-report /tmp/sweep -o /tmp/report`.",
                markup=False,
            )
    return code


_ROOT = Path(__file__).resolve().parent.parent


def _pipeline_report() -> Path | None:
    """The pipeline's example sweep report, if one was generated (pipeline/examples/...)."""
    root = _ROOT
    for candidate in (
        root / "pipeline" / "examples" / "report" / "report.md",
        root / "pipeline" / "examples" / "report.md",
        root / "docs" / "sweep-report" / "report.md",
    ):
        if candidate.exists():
            return candidate
    found = (
        sorted((root / "pipeline" / "examples").glob("**/*report*.md"))
        if (root / "pipeline" / "examples").exists()
        else []
    )
    return found[0] if found else None
