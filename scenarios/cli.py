"""The ``groupsim`` command line (typer): run, step, validate, compare, assign, coordinator,
diagram, demo.

Exit codes: 0 success; 1 an expectation failed (or the simulator failed); 2 invalid input (a bad
scenario file, a bad option). Output is coloured with rich on a terminal and plain (no ANSI
escapes) when piped. Other packages add commands with ``register(app)`` (docs/cli.md): the Spark
pipeline's commands are registered at import time when ``pipeline.cli`` imports, and silently
left out when it (or pyspark) does not.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scenarios import cli_tools
from scenarios.console import (
    EXIT_FAILED,
    EXIT_INVALID,
    EXIT_OK,
    console,
    duration_option,
    print_scenario_error,
)
from scenarios.errors import ScenarioError
from scenarios.units import format_ms

if TYPE_CHECKING:
    from scenarios.model import Scenario

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


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        from scenarios.accel import describe

        try:
            print(f"groupsim {version('groupsim')} ({describe()})")
        except PackageNotFoundError:  # run from a source tree that was never installed
            print(f"groupsim (not installed) ({describe()})")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Simulate Kafka's classic consumer-group protocol."""


# --- validate ----------------------------------------------------------------------------------


@app.command()
def validate(
    files: Annotated[list[str], typer.Argument(help="Scenario files (or library lesson names).")],
    allow_code: Annotated[
        bool,
        typer.Option(
            "--allow-code",
            help="Let scenarios name assignor classes as module:Class (imports and runs that code).",
        ),
    ] = False,
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
            s = load_scenario(f, allow_code=allow_code)
        except ScenarioError as err:
            bad += 1
            print_scenario_error(err)
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
        int | None,
        typer.Option(
            "--seed",
            min=0,
            max=2**63 - 1,
            help="Override the scenario's seed (0 or more, as in a scenario file).",
        ),
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
    table: Annotated[
        bool,
        typer.Option("--table", help="Full assignment tables even past 30 members (a summary)."),
    ] = False,
    allow_long: Annotated[
        bool,
        typer.Option(
            "--allow-long",
            help=f"Allow a run past {MAX_SIMULATED_LABEL} of simulated time (it may take minutes).",
        ),
    ] = False,
    allow_code: Annotated[
        bool,
        typer.Option(
            "--allow-code",
            help="Let scenarios name assignor classes as module:Class (imports and runs that code).",
        ),
    ] = False,
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

    until_ms = duration_option(until)
    if log is not None:
        check_output_path(log, "--log")
    scenarios = []
    invalid = False
    for f in files:
        try:
            scenarios.append(load_scenario(f, allow_code=allow_code))
        except ScenarioError as err:
            invalid = True
            print_scenario_error(err)
    if invalid:
        raise typer.Exit(EXIT_INVALID)
    for s in scenarios:
        _check_span(s, until_ms, allow_long)
    out = console()
    results = []
    status = console(stderr=True)
    for i, s in enumerate(scenarios):
        # a spinner on a terminal only (stderr), never in piped or --json output
        label = f"running {s.name} ({i + 1}/{len(scenarios)})"
        if status.is_terminal:
            with status.status(label, spinner="dots") as spinner:
                result = run_scenario(
                    s, until_ms=until_ms, seed=seed, progress=SimProgress(spinner, label)
                )
        else:
            result = run_scenario(s, until_ms=until_ms, seed=seed)
        results.append(result)
        if log is not None:
            from scenarios.eventlog import write_jsonl

            target = (
                log if len(scenarios) == 1 else log.with_name(f"{log.stem}-{s.name}{log.suffix}")
            )
            try:
                write_jsonl(result.events, target)
            except OSError as exc:
                console(stderr=True).print(f"--log: cannot write {target}: {exc}", markup=False)
                raise typer.Exit(EXIT_INVALID) from None
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
            render_run(
                out,
                s,
                result,
                quiet=quiet,
                verbose=verbose,
                brief=brief,
                full_tables=table,
                until_ms=until_ms,
            )
    if json_out:
        docs = [r.to_dict() for r in results]
        sys.stdout.write(
            json.dumps(docs[0] if len(docs) == 1 else {"runs": docs}, indent=2, sort_keys=True)
            + "\n"
        )
    raise typer.Exit(EXIT_OK if all(r.passed for r in results) else EXIT_FAILED)


MAX_SIMULATED_MS = 6 * 3_600_000  # docs/cli.md: past this, `run` needs --allow-long
MAX_SIMULATED_LABEL = "6h"


def _check_span(scenario: Scenario, until_ms: int | None, allow_long: bool) -> None:
    """Refuse (exit 2) a simulated span past the ceiling unless ``--allow-long`` was given."""
    end = until_ms if until_ms is not None else scenario.end_ms
    if end > MAX_SIMULATED_MS and not allow_long:
        console(stderr=True).print(
            f"{scenario.source}: until: {format_ms(end)} of simulated time is past the "
            f"{MAX_SIMULATED_LABEL} ceiling (a long span can take minutes of real time); "
            "pass --allow-long to run it anyway",
            markup=False,
            style="red",
        )
        raise typer.Exit(EXIT_INVALID)


class SimProgress:
    """Shows simulated time reached, of the end, with a wall-clock estimate, in a rich status."""

    def __init__(self, status: Any, label: str):
        self.status, self.label = status, label
        self.started = time.monotonic()

    def __call__(self, now_ms: int, end_ms: int) -> None:
        elapsed = time.monotonic() - self.started
        done = now_ms / end_ms if end_ms else 1.0
        left = f", ~{elapsed * (1 - done) / done:.0f}s left" if done > 0 and elapsed > 2 else ""
        self.status.update(
            f"{self.label}: simulated {format_ms(now_ms)} of {format_ms(end_ms)} ({done:.0%}{left})"
        )


def check_output_path(path: Path, option: str) -> None:
    """Before a long run: the folder of an output path must exist and be writable (exit 2)."""
    folder = path.parent if str(path.parent) else Path(".")
    problem = None
    if path.is_dir():
        problem = "is a directory; give a file name"
    elif not folder.is_dir():
        problem = f"the folder {folder} does not exist"
    elif not os.access(folder, os.W_OK):
        problem = f"the folder {folder} is not writable"
    if problem:
        console(stderr=True).print(f"{option} {path}: {problem}", markup=False, style="red")
        raise typer.Exit(EXIT_INVALID)


# --- compare -----------------------------------------------------------------------------------


@app.command()
def compare(
    file: Annotated[str, typer.Argument(help="A scenario file (or a library lesson name).")],
    variant: Annotated[
        list[str] | None,
        typer.Option(
            "--variant",
            "-v",
            help="A variant to run: eager, cooperative, static, consumer, or "
            "NAME=path:value,... (dotted-path overrides). Repeat it; default: the four built-ins.",
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the measures as JSON.")] = False,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Override the scenario's seed (all variants).")
    ] = None,
    allow_code: Annotated[
        bool, typer.Option("--allow-code", help="Let the scenario name module:Class assignors.")
    ] = False,
) -> None:
    """Run one scenario under several group protocols with the same seed; one table side by side.

    The built-in variants: classic eager (range), classic cooperative-sticky, static membership,
    and the consumer protocol (KIP-848, uniform). The scenario's expectations are not checked.

    Example: groupsim compare rolling-restart-dynamic --variant eager --variant consumer
    """
    from scenarios import compare as cmp
    from scenarios.loader import load_scenario

    try:
        scenario = load_scenario(file, allow_code=allow_code)
    except ScenarioError as err:
        print_scenario_error(err)
        raise typer.Exit(EXIT_INVALID) from None
    try:
        results = cmp.compare(scenario, variant or cmp.DEFAULT_VARIANTS, seed=seed)
    except (cmp.VariantError, ScenarioError) as exc:
        if isinstance(exc, ScenarioError):
            print_scenario_error(exc)
        else:
            console(stderr=True).print(str(exc), markup=False, style="red")
        raise typer.Exit(EXIT_INVALID) from None
    if json_out:
        doc = {"scenario": scenario.name, "seed": seed, "variants": [r.to_dict() for r in results]}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        raise typer.Exit(EXIT_OK)
    table = cli_tools._table(f"{scenario.name}: the same run under each variant")
    rows = cmp.table_rows(results)
    for header in rows[0]:
        table.add_column(header)
    for row in rows[1:]:
        table.add_row(*row)
    out = console()
    out.print(table)
    for r in results:
        out.print(f"{r.variant}: {r.description}", markup=False)
    raise typer.Exit(EXIT_OK)


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
        from pipeline.cli import register
    except ImportError:
        return  # pyspark (or the pipeline package) is not installed: the core CLI still works
    except Exception as exc:  # a broken plugin must not take the whole CLI down
        console(stderr=True).print(f"warning: pipeline commands unavailable: {exc}", markup=False)
        return
    register(app)


cli_tools.register(app)  # assign, coordinator, diagram, step, lessons

from scenarios import html as _html  # noqa: E402  (registers html: the browser page, issue 19)

_html.register(app)

from scenarios import serve as _serve  # noqa: E402  (registers serve: the local web app, issue 19)

_serve.register(app)
_register_plugins()


def main() -> None:  # pragma: no cover - console entry point alternative
    app()


if __name__ == "__main__":  # python -m scenarios.cli
    app()
