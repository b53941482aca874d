"""What every ``groupsim`` command prints with: the exit codes, a rich console that stays plain
when piped, and the scenario-error printout. Shared by :mod:`scenarios.cli` and
:mod:`scenarios.cli_tools`, which otherwise import nothing from each other but ``register``."""

from __future__ import annotations

import sys

from rich.console import Console

from scenarios.errors import ScenarioError

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2


def console(stderr: bool = False) -> Console:
    """A rich console: colour on a terminal, plain text (no escape codes) when piped."""
    stream = sys.stderr if stderr else sys.stdout
    piped = not (hasattr(stream, "isatty") and stream.isatty())
    # piped output is read in files and pagers: wide enough for the tables, never wrapped
    return Console(
        file=stream, highlight=False, soft_wrap=True, emoji=False, width=120 if piped else None
    )


def print_scenario_error(err: ScenarioError) -> None:
    """Every issue of an invalid scenario, one per line (file:line:column: path: message)."""
    out = console(stderr=True)
    for issue in err.issues:
        out.print(issue.format(), markup=False, style="red")
