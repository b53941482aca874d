"""The consumer's timers as typed keys, and the one table of their deadlines.

Every timer the consumer sets is a frozen ``attrs`` key naming its job and the process
incarnation that set it (``HeartbeatTimer(incarnation=2)``), or a request's timeout
(``RequestTimeout(correlation_id=17)``). The runner sees the key rendered as text
(``"heartbeat:2"``, ``"request-17"``): that text is what ``SetTimer`` / ``CancelTimer`` carry and
what the event log shows, unchanged from the string keys it replaces. ``Consumer.handle_timer``
turns the text back into its key (``ConsumerTimers.parse``) and dispatches on the key's type
through a table, as ``handle_response`` does on the response's type.

``ConsumerTimers`` remembers the deadline each timer was last set for, in one dict, in place of
one ``..._at`` field per timer: the consumer asks it whether a timer is set and for when, and
sets a timer again only when the deadline moves. It sets nothing by itself: ``set`` and
``cancel`` return the effect for the consumer to hand back.
"""

from __future__ import annotations

from typing import ClassVar

from attrs import frozen

from coordinator.effects import CancelTimer, SetTimer


@frozen
class ConsumerTimer:
    """A timer of one consumer incarnation, rendered ``<name>:<incarnation>`` for the runner;
    a timer of an earlier incarnation (the process crashed or closed since) is ignored."""

    #: The timer's name in the rendered key (and in the event log).
    name: ClassVar[str] = ""

    incarnation: int

    def render(self) -> str:
        return f"{self.name}:{self.incarnation}"


@frozen
class PollTimer(ConsumerTimer):
    """The application calls poll() (the next batch, the end of a stall, an auto-commit due,
    an offset lookup's retry)."""

    name: ClassVar[str] = "poll"


@frozen
class HeartbeatTimer(ConsumerTimer):
    """The heartbeat thread wakes at its next deadline (heartbeat, session or poll timer)."""

    name: ClassVar[str] = "heartbeat"


@frozen
class DriveTimer(ConsumerTimer):
    """Application-thread work that became ready while the application was busy runs once it is
    back in poll() (processing model)."""

    name: ClassVar[str] = "drive"


@frozen
class JoinRetryTimer(ConsumerTimer):
    """joinGroupIfNeeded's retry.backoff.ms sleep after a retriable join failure (and the
    onJoinPrepare commit's retry) is over."""

    name: ClassVar[str] = "join-retry"


@frozen
class FindCoordinatorTimer(ConsumerTimer):
    """ensureCoordinatorReady's backoff after a failed lookup is over."""

    name: ClassVar[str] = "find-coordinator"


@frozen
class MetadataTimer(ConsumerTimer):
    """The next metadata request is due (Metadata.timeToNextUpdate)."""

    name: ClassVar[str] = "metadata"


@frozen
class CommitRetryTimer(ConsumerTimer):
    """A commitSync's next retry or its deadline (one timer for all of them)."""

    name: ClassVar[str] = "commit-retry"


@frozen
class JoinPrepareTimer(ConsumerTimer):
    """onJoinPrepare stops waiting for its commit (joinPrepareTimer, the rebalance timeout)."""

    name: ClassVar[str] = "join-prepare"


@frozen
class CloseTimer(ConsumerTimer):
    """close()'s timer ends: it stops waiting for the coordinator's pending requests."""

    name: ClassVar[str] = "close"


@frozen
class RequestTimeout:
    """A request's timeout (request.timeout.ms, or the JoinGroup's longer one), rendered
    ``request-<correlation id>``; correlation ids are unique across incarnations."""

    PREFIX: ClassVar[str] = "request-"

    correlation_id: int

    def render(self) -> str:
        return f"{self.PREFIX}{self.correlation_id}"


#: The consumer's own timer kinds, in the order close() and a fatal error cancel them.
TIMER_KINDS: tuple[type[ConsumerTimer], ...] = (
    PollTimer,
    HeartbeatTimer,
    DriveTimer,
    JoinRetryTimer,
    FindCoordinatorTimer,
    MetadataTimer,
    CommitRetryTimer,
    JoinPrepareTimer,
    CloseTimer,
)

#: The timers' names (the first part of their rendered keys).
TIMER_NAMES: tuple[str, ...] = tuple(kind.name for kind in TIMER_KINDS)


class ConsumerTimers:
    """The timers of one consumer incarnation: their keys, and the deadline each was last set
    for (``None``: not set, or fired, or forgotten). Sends nothing and sets nothing itself."""

    __slots__ = ("_keys", "_rendered", "_texts", "deadlines")

    def __init__(self, incarnation: int) -> None:
        keys = {kind: kind(incarnation) for kind in TIMER_KINDS}
        self._keys: dict[type[ConsumerTimer], ConsumerTimer] = keys
        # rendered once per incarnation: keys are set far more often than incarnations change
        self._texts: dict[type[ConsumerTimer], str] = {k: key.render() for k, key in keys.items()}
        self._rendered: dict[str, ConsumerTimer] = {key.render(): key for key in keys.values()}
        #: kind -> the deadline it was last set for (read-only outside: ``deadlines.get(kind)``
        #: is ``deadline(kind)`` without the call, for the paths that run on every poll)
        self.deadlines: dict[type[ConsumerTimer], int] = {}

    def parse(self, text: str) -> ConsumerTimer | RequestTimeout | None:
        """The key a rendered timer key stands for; None for another incarnation's timer (or
        text that is no consumer timer)."""
        key = self._rendered.get(text)
        if key is not None:
            return key
        if text.startswith(RequestTimeout.PREFIX):
            digits = text[len(RequestTimeout.PREFIX) :]
            if digits.isdigit():
                return RequestTimeout(int(digits))
        return None

    def key(self, kind: type[ConsumerTimer]) -> str:
        """The rendered key of this incarnation's ``kind`` timer."""
        return self._texts[kind]

    def deadline(self, kind: type[ConsumerTimer]) -> int | None:
        """When ``kind`` was last set to fire, or None."""
        return self.deadlines.get(kind)

    def set(self, kind: type[ConsumerTimer], at: int) -> SetTimer:
        """Remember the deadline; the returned effect sets (or moves) the timer."""
        self.deadlines[kind] = at
        return SetTimer(self._texts[kind], at)

    def forget(self, kind: type[ConsumerTimer]) -> None:
        """The timer fired, or no longer needs watching (the runner's copy may still fire)."""
        self.deadlines.pop(kind, None)

    def cancel(self, kind: type[ConsumerTimer]) -> CancelTimer:
        """Forget the deadline; the returned effect cancels the timer."""
        self.deadlines.pop(kind, None)
        return CancelTimer(self._texts[kind])

    def cancel_all(self) -> list[CancelTimer]:
        """Cancel every timer of this incarnation (the process closed or failed)."""
        return [CancelTimer(self._texts[kind]) for kind in TIMER_KINDS]
