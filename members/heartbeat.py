"""Kafka's ``Heartbeat``: the deadlines of the classic consumer's heartbeat thread, sans-I/O.

Three deadlines (the next heartbeat, the session timeout, the poll timeout) and the count of
failed heartbeats behind the retry backoff, plus the two flags of ``HeartbeatThread`` itself
(enabled, failed). Like ``members.metadata``, it sends nothing and sets no timer: the
``Consumer`` sends the HeartbeatRequest, sets the ``heartbeat`` timer at ``next_deadline`` and
logs the events.

Kafka keeps one ``Timer`` per deadline and checks them on every pass of ``HeartbeatThread.run``
(waking every ``retry.backoff.ms``); the simulator keeps the absolute deadlines and wakes the
thread exactly at the earliest one.
"""

from __future__ import annotations

from members.backoff import ExponentialBackoff
from members.failure import ConsumerFatal


class Heartbeat:
    """Heartbeat.java's timers for one consumer incarnation, and HeartbeatThread's state."""

    __slots__ = (
        "_backoff",
        "attempts",
        "enabled",
        "failed",
        "heartbeat_interval_ms",
        "max_poll_interval_ms",
        "next_heartbeat_ms",
        "poll_deadline_ms",
        "session_deadline_ms",
        "session_timeout_ms",
    )

    def __init__(
        self,
        *,
        session_timeout_ms: int,
        heartbeat_interval_ms: int,
        max_poll_interval_ms: int,
        backoff: ExponentialBackoff,
    ) -> None:
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.max_poll_interval_ms = max_poll_interval_ms
        #: Heartbeat.retryBackoff: the consumer's own ExponentialBackoff (its seeded jitter).
        self._backoff = backoff
        #: HeartbeatThread.enabled: only in COMPLETING_REBALANCE / STABLE.
        self.enabled = False
        #: HeartbeatThread.failed: the exception the next poll() throws (a fenced static member).
        self.failed: ConsumerFatal | None = None
        #: heartbeatTimer: when the next heartbeat is due.
        self.next_heartbeat_ms = 0
        #: sessionTimer: no successful heartbeat until then marks the coordinator unknown.
        self.session_deadline_ms = 0
        #: pollTimer: the application must call poll() before then (max.poll.interval.ms).
        self.poll_deadline_ms = 0
        #: Failed heartbeats in a row (the exponent of the retry backoff).
        self.attempts = 0

    def reset_timeouts(self, now: int) -> None:
        """Heartbeat.resetTimeouts (HeartbeatThread.enable): all three timers start over."""
        self.session_deadline_ms = now + self.session_timeout_ms
        self.poll_deadline_ms = now + self.max_poll_interval_ms
        self.next_heartbeat_ms = now + self.heartbeat_interval_ms

    def reset_session_timeout(self, now: int) -> None:
        """Heartbeat.resetSessionTimeout: a coordinator was found."""
        self.session_deadline_ms = now + self.session_timeout_ms

    def poll(self, now: int) -> None:
        """Heartbeat.poll: the application called poll() at ``now``."""
        self.poll_deadline_ms = now + self.max_poll_interval_ms

    def sent_heartbeat(self, now: int) -> None:
        """Heartbeat.sentHeartbeat: the next one is due a heartbeat interval later."""
        self.next_heartbeat_ms = now + self.heartbeat_interval_ms

    def receive_heartbeat(self, now: int) -> None:
        """Heartbeat.receiveHeartbeat: the session starts over, the backoff too."""
        self.attempts = 0
        self.session_deadline_ms = now + self.session_timeout_ms

    def fail_heartbeat(self, now: int) -> None:
        """Heartbeat.failHeartbeat: the next attempt waits the exponential retry backoff."""
        self.next_heartbeat_ms = now + self._backoff.backoff(self.attempts)
        self.attempts += 1

    def should_heartbeat(self, now: int) -> bool:
        return now >= self.next_heartbeat_ms

    def session_timeout_expired(self, now: int) -> bool:
        return now >= self.session_deadline_ms

    def poll_timeout_expired(self, now: int) -> bool:
        return now >= self.poll_deadline_ms

    def next_deadline(self, poll_timeout_possible: bool) -> int:
        """The earliest deadline the thread must wake for: the next heartbeat, the session
        timeout, and the poll timeout when the application can overrun it."""
        at = min(self.next_heartbeat_ms, self.session_deadline_ms)
        if poll_timeout_possible:
            at = min(at, self.poll_deadline_ms)
        return at
