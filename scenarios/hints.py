"""The wording of validation messages, shared by the validator and the step definitions.

``scenarios.validate`` walks a scenario; ``scenarios.actions`` and ``scenarios.checks`` define
each timeline action and expectation check. All of them describe a bad value the same way
(``kind_of``), suggest the closest known name (``did_you_mean``) and list what is known
(``listing``), so that every message reads alike.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from coordinator.topics import invalid_topic_reason

TOPIC_NAME_HINT = "Kafka allows letters, digits, '.', '_' and '-', at most 249 characters"


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    options = list(choices)
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if not close:
        # Kafka's dotted names written in snake_case or with a different separator
        norm = {c.replace(".", "_").replace("-", "_").lower(): c for c in options}
        hit = norm.get(word.replace(".", "_").replace("-", "_").lower())
        close = [hit] if hit else []
    return f"did you mean `{close[0]}`?" if close else None


def legal_topic_name(name: object) -> bool:
    """Kafka's Topic.validate (coordinator.topics): the cluster refuses any other name."""
    return isinstance(name, str) and invalid_topic_reason(name) is None


def kind_of(value: Any) -> str:
    """How a message names a value of the wrong type."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def listing(what: str, known: Iterable[str]) -> str | None:
    known = list(known)
    if not known:
        return f"no {what} is declared"
    shown = ", ".join(known[:8]) + (", ..." if len(known) > 8 else "")
    return f"known: {shown}"
