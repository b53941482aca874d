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
        # structlog hands every processor the dict it built; its signature says MutableMapping
        events.append(event_dict)  # type: ignore[arg-type]
        return event_dict  # the sink below ignores it

    def append(self, event: str, **fields: Any) -> dict[str, Any]:
        """Log an event directly (the runner's own events; cheaper than going through structlog)."""
        fields["event"] = event
        fields["seq"] = len(self.events)
        self.events.append(fields)
        return fields


class _Sink:
    """The wrapped logger: the event is already in the log, so rendering it is a no-op."""

    def msg(self, *args: Any, **kwargs: Any) -> None:
        return None

    debug = info = warning = error = critical = exception = log = msg


def _level_method(method: str) -> Any:
    def log(self: SimBoundLogger, event: str | None = None, **kw: Any) -> None:
        context = self._context
        if context:
            kw = {**context, **kw}
        kw["event"] = event
        events = self._events
        if events is not None:  # the chain is only the event log: append in place
            kw["seq"] = len(events)
            events.append(kw)
            return
        logger = self._logger
        event_dict: Any = kw  # each processor returns the next one's input
        for processor in self._processors:
            event_dict = processor(logger, method, event_dict)

    log.__name__ = method
    return log


class SimBoundLogger(structlog.BoundLoggerBase):
    """A structlog bound logger (``bind``/``new``/``unbind`` as usual) with a lean hot path.

    structlog's generic path copies the context, runs the chain and calls the wrapped logger;
    here the chain is only the event log, so each level method merges context and fields into
    one dict and hands it to the processors directly; when the chain is only the simulation's
    ``EventLog`` (always, unless a user adds processors) it appends the dict itself. A
    simulation logs millions of events, and this more than halves the cost of each. Levels
    below the simulation's ``log_level`` are no-ops.
    """

    def __init__(self, logger: Any, processors: Any, context: Any) -> None:
        super().__init__(logger, processors, context)
        chain = list(processors)
        # the common chain, [EventLog]: its events list, so each call skips the processor loop
        self._events: list[dict[str, Any]] | None = (
            chain[0].events if len(chain) == 1 and type(chain[0]) is EventLog else None
        )

    debug = _level_method("debug")
    info = msg = _level_method("info")
    warning = warn = _level_method("warning")
    error = exception = _level_method("error")
    critical = fatal = _level_method("critical")


def _ignore(self: Any, event: str | None = None, **kw: Any) -> None:
    return None


_LEVEL_CLASSES: dict[str, type[SimBoundLogger]] = {"debug": SimBoundLogger}


def _wrapper_class(level: str) -> type[SimBoundLogger]:
    cls = _LEVEL_CLASSES.get(level)
    if cls is None:
        muted = {"debug": _ignore}
        if level == "warning":
            muted.update(info=_ignore, msg=_ignore)
        cls = _LEVEL_CLASSES[level] = type(f"SimBoundLogger_{level}", (SimBoundLogger,), muted)
    return cls


def make_logger(log: EventLog, level: str = "debug", **initial: Any) -> Any:
    """A structlog logger (``structlog.wrap_logger``, no global configuration) that appends
    every event at ``level`` or above to ``log``."""
    if level not in LEVELS:
        raise ValueError(f"unknown log level {level!r}; choose from {', '.join(LEVELS)}")
    return structlog.wrap_logger(
        _Sink(),
        processors=[log],
        wrapper_class=_wrapper_class(level),
        context_class=dict,
        cache_logger_on_first_use=True,
        **initial,
    ).bind()  # the concrete logger, not structlog's lazy proxy (one indirection less per event)


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
