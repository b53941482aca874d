"""Located validation errors for scenario (and sweep) files.

A scenario file is user input: every problem must point at ``file:line:column`` and at the field
path (``timeline[2].crash``), and all problems are reported at once, so that a user fixes a file in
one pass instead of one error per run. ``ScenarioError`` carries the whole list.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import field, frozen

MAX_ECHO = 400  # characters of a message (or hint) shown; a file's values are echoed in messages


def _cap(text: str) -> str:
    """A message cut to ``MAX_ECHO`` characters: a binary or huge value must not flood the screen."""
    if len(text) <= MAX_ECHO:
        return text
    return f"{text[:MAX_ECHO]}... ({len(text) - MAX_ECHO:,} more characters)"


def _cap_optional(text: str | None) -> str | None:
    return None if text is None else _cap(text)


@frozen
class Issue:
    """One problem in a scenario: where it is, what is wrong, and (maybe) how to fix it."""

    source: str
    path: str = field(converter=_cap)
    message: str = field(converter=_cap)
    line: int | None = None  # 1-based
    column: int | None = None  # 1-based
    hint: str | None = field(default=None, converter=_cap_optional)

    def location(self) -> str:
        if self.line is None:
            return self.source
        return f"{self.source}:{self.line}:{self.column}"

    def format(self) -> str:
        where = self.location()
        field = f" {self.path}:" if self.path else ""
        text = f"{where}:{field} {self.message}"
        if self.hint:
            text += f" ({self.hint})"
        return text

    def as_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "line": self.line,
            "column": self.column,
            "path": self.path,
            "message": self.message,
            "hint": self.hint,
        }


class ScenarioError(Exception):
    """A scenario could not be loaded; ``issues`` lists every problem found, in file order."""

    def __init__(self, issues: Sequence[Issue]):
        # One line per distinct problem: a setting in ``defaults:`` is checked once per consumer
        # that inherits it, and would otherwise be reported once per consumer.
        self.issues: list[Issue] = sorted(
            dict.fromkeys(issues), key=lambda i: (i.source, i.line or 0, i.column or 0, i.path)
        )
        super().__init__(self.format())

    def format(self) -> str:
        count = len(self.issues)
        head = f"{count} error{'s' if count != 1 else ''} in scenario"
        return "\n".join([head, *(f"  {i.format()}" for i in self.issues)])
