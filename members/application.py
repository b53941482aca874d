"""The simulated application thread around ``KafkaConsumer.poll()``, sans-I/O.

The application is either inside ``poll()`` or busy (processing a batch, or stalled) until
``busy_until``. Two models, fixed by the config: *continuous* (no processing time: always inside
``poll()`` unless stalled; records accrue with time, ``members.positions``) and *processing*
(one ``poll()`` per batch; processing takes ``processing_time_ms`` plus a cost per record, and
the next ``poll()`` comes ``max(processing, poll_interval_ms)`` later). Application-thread work
that becomes ready while it is busy waits until it is back in ``poll()``.

It sends nothing and sets no timer: the ``Consumer`` sets the ``poll`` and ``drive`` timers at
the times this part computes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


class ApplicationLoop:
    """Whether the application is inside poll(), and when it next polls."""

    __slots__ = (
        "batch_end",
        "batch_start",
        "busy_until",
        "continuous",
        "poll_interval_ms",
        "processing_time_ms",
        "processing_time_per_record_ms",
    )

    def __init__(
        self,
        *,
        poll_interval_ms: int,
        processing_time_ms: int,
        processing_time_per_record_ms: float,
    ) -> None:
        self.poll_interval_ms = poll_interval_ms
        self.processing_time_ms = processing_time_ms
        self.processing_time_per_record_ms = processing_time_per_record_ms
        #: The continuous model: no processing time, so no poll tick per batch.
        self.continuous = processing_time_ms == 0 and processing_time_per_record_ms == 0
        #: Busy (processing or stalled) until then; inside poll() from then on.
        self.busy_until = 0
        #: The last batch's processing (processing model): [batch_start, batch_end).
        self.batch_start = 0
        self.batch_end = 0

    def in_poll(self, now: int) -> bool:
        return now >= self.busy_until

    def stall(self, duration_ms: int, now: int) -> int:
        """The application blocks for ``duration_ms`` (after any earlier stall or processing);
        when it is back in poll()."""
        self.busy_until = max(self.busy_until, now + duration_ms)
        return self.busy_until

    def processed(self, records: int, now: int) -> int:
        """Processing model: a poll() at ``now`` returned ``records``; the application
        processes them, and the next poll() is due at the returned time."""
        processing = self.processing_time_ms + int(self.processing_time_per_record_ms * records)
        self.busy_until = now + processing
        self.batch_start = now
        self.batch_end = now + processing
        return now + max(processing, self.poll_interval_ms)

    def next_break(self, at: int) -> int:
        """The first time at or after ``at`` when the application's own loop can do something
        else: inside poll(), or between two records of a batch (each record costs
        ``processing_time_per_record_ms``, after the batch's fixed ``processing_time_ms``).
        A stall, or a batch without a per-record cost, has no break before it ends. Used by a
        consumer whose heartbeats come from the application's loop (kafkajs), not a thread."""
        if at >= self.busy_until:
            return at
        per_record = self.processing_time_per_record_ms
        first = self.batch_start + self.processing_time_ms
        if per_record > 0 and at < self.batch_end:
            k = 0 if at <= first else math.ceil((at - first) / per_record)
            boundary = math.ceil(first + k * per_record)
            if boundary < self.batch_end:
                return max(boundary, at)
        return self.busy_until

    def poll_timeout_possible(self, now: int, poll_deadline_ms: int) -> bool:
        """Only an application outside poll() (stalled or processing past the deadline) can
        overrun max.poll.interval.ms: one waiting inside poll() keeps calling it."""
        return now < self.busy_until and poll_deadline_ms < self.busy_until

    @staticmethod
    def next_wakeup(now: int, due: Iterable[int]) -> int | None:
        """Continuous model: the application wakes by itself for the earliest of ``due`` (an
        auto-commit, an OffsetFetch retry), never at ``now`` itself; None: nothing is due."""
        wakeups = [max(at, now + 1) for at in due]
        return min(wakeups) if wakeups else None
