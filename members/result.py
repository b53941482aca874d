"""What one consumer call produced: its effects and its events, returned as a value.

The consumer's counterpart of ``coordinator.result.CoordinatorResult``. Every sans-I/O entry
point of ``members.consumer.Consumer`` (``start``, ``handle_response``, ``handle_timer``,
``close``, ...) returns a ``ConsumerResult``: the effects (``Send``, ``SetTimer``,
``CancelTimer``) for the runner to carry out, and the events that happened during the call, in
the order they happened, for the runner to record in its one event log. The consumer has no
logger.

An event is a ``(name, fields)`` pair as on the coordinator side (``coordinator.result``): the
fields carry ``t_ms`` and the consumer's ``node`` and ``group_id``; the recorder adds ``event``
and ``seq`` and may take ownership of the fields dict.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from coordinator.effects import Effect
from coordinator.result import LoggedEvent


class ConsumerResult(NamedTuple):
    """The effects to carry out and the events to record, in the order they happened.

    An immutable, typed value like the frozen ``attrs`` classes, as a ``NamedTuple``: every
    consumer input makes one, and a tuple is built in one C call (``tuple.__new__``), where a
    frozen ``attrs`` instance sets each field through ``object.__setattr__`` (about 2.4 times the
    machine instructions)."""

    effects: tuple[Effect, ...] = ()
    events: tuple[LoggedEvent, ...] = ()


NO_RESULT = ConsumerResult()

_new_result = tuple.__new__  # what ConsumerResult(effects, events) calls, without its frame


class ConsumerStep:
    """The outputs of one consumer call while it runs: its effects and its events, in order.

    Created by the entry point and passed down as an argument (``step``) to whatever sends, sets
    a timer or logs, the membership managers included; nobody keeps it after the call. Every
    event names the consumer's node and group (as a logger bound to them would).
    """

    __slots__ = ("effects", "events", "group_id", "node")

    def __init__(self, node: str, group_id: str) -> None:
        self.node = node
        self.group_id = group_id
        self.effects: list[Effect] = []
        self.events: list[LoggedEvent] = []

    def event(self, name: str, **fields: Any) -> None:
        # the bound context, as a logger bound to it would add it; no event of the consumer
        # names a node or group of its own (two stores instead of two setdefault calls)
        fields["node"] = self.node
        fields["group_id"] = self.group_id
        self.events.append((name, fields))

    def result(self) -> ConsumerResult:
        if not self.effects and not self.events:
            return NO_RESULT
        return _new_result(ConsumerResult, (tuple(self.effects), tuple(self.events)))
