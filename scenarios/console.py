"""What every ``groupsim`` command prints with: the exit codes, a rich console that stays plain
when piped, and the scenario-error printout. Shared by :mod:`scenarios.cli` and
:mod:`scenarios.cli_tools`, which otherwise import nothing from each other but ``register``."""

from __future__ import annotations

import os
import sys

import typer
from rich.console import Console

from scenarios.errors import ScenarioError
from scenarios.units import parse_duration_ms

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2


def console(stderr: bool = False) -> Console:
    """A rich console: colour on a terminal, plain text (no escape codes) when piped."""
    stream = sys.stderr if stderr else sys.stdout
    piped = not (hasattr(stream, "isatty") and stream.isatty())
    # piped output is read in files and pagers: wide enough for the tables (COLUMNS if set)
    width = None  # a terminal's own width (rich reads COLUMNS too)
    if piped:
        columns = os.environ.get("COLUMNS", "")
        width = int(columns) if columns.isdigit() and int(columns) >= 40 else 120
    return Console(file=stream, highlight=False, soft_wrap=True, emoji=False, width=width)


def print_scenario_error(err: ScenarioError) -> None:
    """Every issue of an invalid scenario, one per line (file:line:column: path: message)."""
    out = console(stderr=True)
    for issue in err.issues:
        out.print(issue.format(), markup=False, style="red")


def duration_option(value: str | None) -> int | None:
    """A duration option's value in ms (``30s``, ``2m``), or typer's usage error."""
    if value is None:
        return None
    try:
        return parse_duration_ms(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
