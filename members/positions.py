"""What the consumer owns and how far it has read: the assignment and positions of Kafka's
``SubscriptionState``, and the simulated fetcher that moves the positions on, sans-I/O.

Partitions are endless logs. A partition owned without a position waits for its committed
offset (OffsetFetch); one with a position is fetchable. Each ``poll()`` returns up to
``max.poll.records`` records spread over the fetchable partitions (the first ones in partition
order take the remainder). In the continuous model (no processing time, the default) the
simulated application is always inside ``poll()``, so records accrue with time, one batch per
``poll_interval_ms``, and are added when positions are read or what is fetchable changes
(``materialize``), instead of one event per batch. Every change of what is fetchable, or of
whether the application is in ``poll()``, calls ``materialize`` first and ``restart_accrual``
after, so the conditions are constant over the interval being accounted.

It sends nothing, sets no timer and logs nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from assignors.api import TopicPartition


class FetchPositions:
    """The owned partitions, their positions, and the records accrued since ``accrue_from``."""

    __slots__ = (
        "_ready",
        "accrue_from",
        "continuous",
        "max_poll_records",
        "owned",
        "pending_revocation",
        "poll_interval_ms",
        "positions",
    )

    def __init__(self, *, max_poll_records: int, poll_interval_ms: int, continuous: bool) -> None:
        self.max_poll_records = max_poll_records
        self.poll_interval_ms = poll_interval_ms
        #: The continuous poll model (records accrue with time) rather than one poll per batch.
        self.continuous = continuous
        #: SubscriptionState.assignedPartitions, sorted.
        self.owned: list[TopicPartition] = []
        #: The position of every owned partition that has one.
        self.positions: dict[TopicPartition, int] = {}
        #: Records accrue from this time (continuous model).
        self.accrue_from = 0
        #: EAGER partitions pending revocation while onJoinPrepare's commit is out
        #: (maybeMarkPartitionsPendingRevocation): nothing is fetched.
        self.pending_revocation = False
        self._ready: list[TopicPartition] | None = None  # fetchable partitions (cache)

    def ready(self) -> list[TopicPartition]:
        """Owned partitions with a position (fetchable), cached until ownership or positions
        change."""
        if self._ready is None:
            self._ready = [tp for tp in self.owned if tp in self.positions]
        return self._ready

    def fetching(self) -> bool:
        """Something to fetch, and no partitions pending revocation."""
        ready = self._ready
        if ready is None:
            ready = self.ready()
        return bool(ready) and not self.pending_revocation

    def missing(self) -> list[TopicPartition]:
        """Owned partitions still without a position (initWithCommittedOffsetsIfNeeded)."""
        return [tp for tp in self.owned if tp not in self.positions]

    def consumed(self, now: int) -> dict[TopicPartition, int]:
        """The positions of the owned partitions as of ``now`` (what a commit sends)."""
        self.materialize(now)
        positions = self.positions
        return {tp: positions[tp] for tp in self.owned if tp in positions}

    def set_owned(self, partitions: Iterable[TopicPartition], now: int) -> None:
        """SubscriptionState.assignFromSubscribed: keep positions of partitions still owned."""
        self.materialize(now)
        self._ready = None
        keep = set(partitions)
        self.owned = sorted(keep)
        self.positions = {tp: off for tp, off in self.positions.items() if tp in keep}
        self.restart_accrual(now)

    def seek_committed(self, committed: Iterable[tuple[TopicPartition, int]], now: int) -> None:
        """The committed offsets arrived: owned partitions without a position start there (no
        committed offset, -1: the model's auto.offset.reset is "earliest", offset 0)."""
        self.materialize(now)
        self._ready = None
        owned = set(self.owned)
        positions = self.positions
        for tp, offset in committed:
            if tp in owned and tp not in positions:
                positions[tp] = max(offset, 0)
        self.restart_accrual(now)

    def invalidate(self) -> None:
        """Positions were changed from outside (a test seeding one): drop the cache."""
        self._ready = None

    def advance(self, batches: int) -> None:
        """``batches`` polls' worth of records: max.poll.records each, spread evenly over the
        fetchable partitions (the first ones in partition order take the remainder)."""
        ready = self.ready()
        share, extra = divmod(self.max_poll_records, len(ready))
        positions = self.positions
        for i, tp in enumerate(ready):
            positions[tp] += batches * (share + (1 if i < extra else 0))

    def consume_batch(self) -> int:
        """Processing model: one poll()'s batch; the number of records it returned."""
        if not self.fetching():
            return 0
        self.advance(1)
        return self.max_poll_records

    def materialize(self, now: int) -> None:
        """Continuous model: add the batches polled since ``accrue_from`` (one per
        poll_interval_ms)."""
        if not self.continuous or now <= self.accrue_from:
            return
        ready = self._ready  # fetching(), inlined: this runs on nearly every consumer call
        if ready is None:
            ready = self.ready()
        if not ready or self.pending_revocation:
            self.accrue_from = now
            return
        batches = (now - self.accrue_from) // self.poll_interval_ms
        if batches > 0:
            self.advance(batches)
            self.accrue_from += batches * self.poll_interval_ms

    def restart_accrual(self, now: int) -> None:
        if now > self.accrue_from:
            self.accrue_from = now
