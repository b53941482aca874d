"""Small value classes of the ``Simulation`` API, in a module of their own.

``scenarios.simulation`` imports them from here (and they are still importable from there): it is
one of the modules the optional compiled build (``make accel``, docs/runner.md) compiles with
mypyc, and mypyc compiles neither a ``list`` subclass nor attrs fields with ``field(...)``
defaults or ``object`` annotations. Here they stay ordinary Python classes in either build.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import define, field


class Partitions(list):
    """A list of ``TopicPartition`` that also equals the same partitions written as strings:
    ``sim.assignments("g") == {"C1": ["orders-0", "orders-1"]}`` reads like the scenario files."""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple)):
            return [str(tp) for tp in self] == [str(tp) for tp in other]
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None


class Settled:
    """``run_until_stable``'s answer: truthy when settled; a falsy one says where it stopped."""

    __slots__ = ("detail", "ok")

    def __init__(self, ok: bool, detail: str) -> None:
        self.ok, self.detail = ok, detail

    def __bool__(self) -> bool:
        return self.ok

    def __eq__(self, other: object) -> bool:
        return self.ok == other if isinstance(other, bool) else NotImplemented

    # Python's way to make a class with __eq__ unhashable; typeshed types object.__hash__ as a
    # method, so mypy rejects the None (list, above, is typed with a None __hash__ already).
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "Settled(True)" if self.ok else f"Settled(False: {self.detail})"


@define
class RawCall:
    """A request sent by hand with ``send_raw``; ``response`` is filled in when it arrives."""

    src: str
    dst: str
    correlation_id: int
    request: object
    sent_ms: int
    response: object | None = None
    received_ms: int | None = None
    disconnected: bool = False

    @property
    def done(self) -> bool:
        return self.response is not None or self.disconnected


@define
class _ConsumerSlot:
    consumer: Any
    incarnation: int = 0
    running: bool = False  # started and not crashed
    ever_started: bool = False
    closed: bool = False
    #: ``consumer.group_standing`` (``Simulation.is_stable`` asks it), bound once
    standing: Callable[[], tuple[bool, int] | None] | None = None


@define
class _RawClient:
    next_correlation_id: int = 1
    calls: dict[int, RawCall] = field(factory=dict)
