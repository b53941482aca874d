"""What one coordinator call produced: its effects and its events, returned as a value.

Kafka's coordinator handlers return a ``CoordinatorResult`` (the records to write and the
response); the runtime, not the handler, carries it out. Here every entry point of the cluster and
of a shard returns a ``CoordinatorResult``: the effects (``Send``, ``SetTimer``, ``CancelTimer``)
for the runner to carry out, and the events that happened, in order, for the runner to record in
its one event log. The coordinator itself has no logger.

An event is a ``(name, fields)`` pair: ``fields`` are the event's JSON fields (``t_ms``, ``node``,
...), without ``event`` and ``seq``, which the recorder adds. A recorder may take ownership of the
``fields`` dict (the simulation's log stores it as is), so read a result's events once.

Inside one call the outputs are gathered in a ``Step``, created by the entry point and passed
down explicitly to everything that emits; nothing is kept on the coordinator between calls.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from attrs import frozen

from coordinator.effects import Effect
from coordinator.errors import NO_ERROR

LoggedEvent = tuple[str, dict[str, Any]]
"""An event: its name and its fields (``event`` and ``seq`` are added by the recorder)."""


@frozen
class CoordinatorResult:
    """The effects to carry out and the events to record, in the order they happened."""

    effects: tuple[Effect, ...] = ()
    events: tuple[LoggedEvent, ...] = ()


NO_RESULT = CoordinatorResult()


class Step:
    """The outputs of one entry-point call while it runs (the simulated time, effects, events)."""

    __slots__ = ("append_error", "appends", "effects", "events", "now")

    def __init__(self, now_ms: int) -> None:
        self.now = now_ms
        self.effects: list[Effect] = []
        self.events: list[LoggedEvent] = []
        self.appends = 0  # log appends that succeeded in this call
        self.append_error = NO_ERROR  # the last append of this call that failed, if any

    def event(self, name: str, **fields: Any) -> None:
        self.events.append((name, fields))

    def add(self, result: CoordinatorResult) -> None:
        """Fold in what a nested call returned (after what this step already holds)."""
        self.effects.extend(result.effects)
        self.events.extend(result.events)

    def result(self) -> CoordinatorResult:
        if not self.effects and not self.events:
            return NO_RESULT
        return CoordinatorResult(tuple(self.effects), tuple(self.events))


def record_events(events: Iterable[LoggedEvent], logger: Any) -> None:
    """Write events to a structlog-style logger (``logger.info(name, **fields)``), in order."""
    info = logger.info
    for name, fields in events:
        info(name, **fields)
