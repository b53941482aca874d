"""The per-simulation event log: a structlog logger that appends to a list, and JSON-lines output.

Each simulation gets its own logger from ``structlog.wrap_logger`` (never the global structlog
configuration, so two simulations in one process, or a user's own structlog set-up, cannot
interfere). Its processor chain is two steps: stamp ``seq`` (the position in the log) and append
the event dict to the simulation's list, then drop the event so nothing is rendered or printed.
No wall-clock timestamp is ever added: events carry the simulated ``t_ms`` their producer was
called with. Same scenario + same seed therefore gives a byte-identical log.
"""

from __future__ import annotations

import enum
import json
import logging
from collections.abc import Iterable, MutableMapping
from pathlib import Path
from typing import IO, Any

import attrs
import structlog

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}


class EventLog:
    """The list of event dicts, and the processor that fills it."""

    __slots__ = ("events",)

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def __call__(
        self, _logger: object, _method: str, event_dict: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        events = self.events
        event_dict["seq"] = len(events)
        events.append(event_dict)  # type: ignore[arg-type]
        raise structlog.DropEvent

    def append(self, event: str, **fields: Any) -> dict[str, Any]:
        """Log an event directly (the runner's own events; cheaper than going through structlog)."""
        fields["event"] = event
        fields["seq"] = len(self.events)
        self.events.append(fields)
        return fields


class _Sink:
    """The wrapped logger: never reached, because the last processor drops every event."""

    def msg(self, *args: Any, **kwargs: Any) -> None:  # pragma: no cover - unreachable
        return None

    debug = info = warning = error = critical = exception = msg


def make_logger(log: EventLog, level: str = "debug", **initial: Any) -> Any:
    """A structlog BoundLogger that appends every event at ``level`` or above to ``log``."""
    if level not in LEVELS:
        raise ValueError(f"unknown log level {level!r}; choose from {', '.join(LEVELS)}")
    return structlog.wrap_logger(
        _Sink(),
        processors=[log],
        wrapper_class=structlog.make_filtering_bound_logger(LEVELS[level]),
        context_class=dict,
        cache_logger_on_first_use=True,
        **initial,
    )


def _json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, bytes):
        return value.hex()
    if attrs.has(type(value)):
        return attrs.asdict(value, recurse=True)
    return str(value)


def dumps_event(event: dict[str, Any]) -> str:
    """One event as one JSON line: sorted keys, compact, enums by name, sets sorted."""
    return json.dumps(event, sort_keys=True, separators=(",", ":"), default=_json_default)


def write_jsonl(events: Iterable[dict[str, Any]], target: str | Path | IO[str]) -> None:
    """Write events as JSON lines (to a path or an open text file)."""
    if isinstance(target, (str, Path)):
        with open(target, "w", encoding="utf-8") as handle:
            write_jsonl(events, handle)
        return
    for event in events:
        target.write(dumps_event(event))
        target.write("\n")


def read_jsonl(source: str | Path) -> list[dict[str, Any]]:
    with open(source, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
