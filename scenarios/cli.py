"""The ``groupsim`` command line (typer): run, step, validate, assign, coordinator, diagram, demo.

Exit codes: 0 success; 1 an expectation failed (or the simulator failed); 2 invalid input (a bad
scenario file, a bad option). Output is coloured with rich on a terminal and plain (no ANSI
escapes) when piped. Other packages add commands with ``register(app)`` (docs/cli.md): the Spark
pipeline's commands are registered at import time when ``pipeline.cli`` imports, and silently
left out when it (or pyspark) does not.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from scenarios.errors import ScenarioError
from scenarios.units import parse_duration_ms

app = typer.Typer(
    name="groupsim",
    help=(
        "Simulate Kafka's classic consumer-group protocol: replay YAML scenarios, run assignors, "
        "look up coordinators, draw state machines.\n\n"
        "Examples:\n\n"
        "  groupsim demo\n\n"
        "  groupsim run scenarios/library/rolling-restart-dynamic.yaml\n\n"
        "  groupsim assign --topics T1:3,T2:3 --members C0,C1 --assignor range"
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2


def console(stderr: bool = False) -> Console:
    """A rich console: colour on a terminal, plain text (no escape codes) when piped."""
    stream = sys.stderr if stderr else sys.stdout
    piped = not (hasattr(stream, "isatty") and stream.isatty())
    # piped output is read in files and pagers: wide enough for the tables, never wrapped
    return Console(
        file=stream, highlight=False, soft_wrap=True, emoji=False, width=120 if piped else None
    )


def _duration_option(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return parse_duration_ms(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _print_scenario_error(err: ScenarioError) -> None:
    out = console(stderr=True)
    for issue in err.issues:
        out.print(issue.format(), markup=False, style="red")


# --- validate ----------------------------------------------------------------------------------


@app.command()
def validate(
    files: Annotated[list[str], typer.Argument(help="Scenario files (or library lesson names).")],
) -> None:
    """Check scenario files; print every error with file:line:column and the field path.

    Exit 0 when all are valid, 2 otherwise.

    Example: groupsim validate my-scenario.yaml scenarios/library/*.yaml
    """
    from scenarios.loader import load_scenario

    out = console()
    bad = 0
    for f in files:
        try:
            s = load_scenario(f)
        except ScenarioError as err:
            bad += 1
            _print_scenario_error(err)
            continue
        out.print(
            f"{f}: ok ({s.name}: {len(s.consumers)} consumers, {len(s.timeline)} steps, {len(s.expect)} expectations)",
            markup=False,
        )
    raise typer.Exit(EXIT_INVALID if bad else EXIT_OK)


# --- run ---------------------------------------------------------------------------------------


@app.command()
def run(
    files: Annotated[list[str], typer.Argument(help="Scenario files (or library lesson names).")],
    json_out: Annotated[
        bool,
        typer.Option("--json", help="Print one JSON result document (docs/result-schema.json)."),
    ] = False,
    log: Annotated[
        Path | None, typer.Option("--log", help="Write the structlog event log as JSON lines.")
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Stop at this simulated time, e.g. 30s.")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Override the scenario's seed.")
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Only the expectation results.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Every event, heartbeats included.")
    ] = False,
    brief: Annotated[
        bool,
        typer.Option("--brief", "-b", help="The story only: steps, state changes, assignments."),
    ] = False,
    html_out: Annotated[
        Path | None,
        typer.Option("--html", help="Also write the run as a browser page (as `groupsim html`)."),
    ] = None,
) -> None:
    """Run scenarios: the timeline, assignment tables, expectation results.

    Exit 0 when every expectation holds, 1 when one fails, 2 when a file is invalid.

    Examples:

      groupsim run scenarios/library/seed000-range-threads.yaml

      groupsim run my.yaml --until 90s --log events.jsonl

      groupsim run my.yaml --json | jq .groups
    """
    from scenarios.loader import load_scenario
    from scenarios.report import render_run
    from scenarios.runner import run_scenario

    until_ms = _duration_option(until)
    scenarios = []
    invalid = False
    for f in files:
        try:
            scenarios.append(load_scenario(f))
        except ScenarioError as err:
            invalid = True
            _print_scenario_error(err)
    if invalid:
        raise typer.Exit(EXIT_INVALID)
    out = console()
    results = []
    err = console(stderr=True)
    for i, s in enumerate(scenarios):
        # a spinner on a terminal only (stderr), never in piped or --json output
        with (
            err.status(f"running {s.name} ({i + 1}/{len(scenarios)})", spinner="dots")
            if err.is_terminal
            else _nothing()
        ):
            result = run_scenario(s, until_ms=until_ms, seed=seed)
        results.append(result)
        if log is not None:
            from scenarios.eventlog import write_jsonl

            target = (
                log if len(scenarios) == 1 else log.with_name(f"{log.stem}-{s.name}{log.suffix}")
            )
            write_jsonl(result.events, target)
        if html_out is not None:
            from scenarios.html import write_html

            page = (
                html_out
                if len(scenarios) == 1
                else html_out.with_name(f"{html_out.stem}-{s.name}{html_out.suffix}")
            )
            write_html(s, result, page)
        if not json_out:
            if i:
                out.print()
            render_run(out, s, result, quiet=quiet, verbose=verbose, brief=brief)
    if json_out:
        docs = [r.to_dict() for r in results]
        sys.stdout.write(
            json.dumps(docs[0] if len(docs) == 1 else {"runs": docs}, indent=2, sort_keys=True)
            + "\n"
        )
    raise typer.Exit(EXIT_OK if all(r.passed for r in results) else EXIT_FAILED)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


# --- demo --------------------------------------------------------------------------------------


@app.command()
def demo(
    lessons: Annotated[
        list[str] | None, typer.Argument(help="Lesson names to show instead of the default tour.")
    ] = None,
) -> None:
    """A one-minute tour: what a rebalance is, shown by running a few lessons.

    Example: groupsim demo
    """
    from scenarios.demo import run_demo

    raise typer.Exit(run_demo(console(), lessons or None))


def _register_plugins() -> None:
    """Commands other packages contribute (the Spark pipeline); absent when they cannot import."""
    try:
        from pipeline.cli import register  # type: ignore[import-not-found]
    except ImportError:
        return  # pyspark (or the pipeline package) is not installed: the core CLI still works
    except Exception as exc:  # a broken plugin must not take the whole CLI down
        console(stderr=True).print(f"warning: pipeline commands unavailable: {exc}", markup=False)
        return
    register(app)


from scenarios import cli_tools as _tools  # noqa: E402  (registers assign/coordinator/diagram/step)

_tools.register(app)

from scenarios import html as _html  # noqa: E402  (registers html: the browser page, issue 19)

_html.register(app)

from scenarios import serve as _serve  # noqa: E402  (registers serve: the local web app, issue 19)

_serve.register(app)
_register_plugins()


def main() -> None:  # pragma: no cover - console entry point alternative
    app()


if __name__ == "__main__":  # python -m scenarios.cli
    app()
