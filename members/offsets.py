"""The consumer's offsets: ConsumerCoordinator's commit and OffsetFetch parts, sans-I/O.

``CommitResult`` is one commit as the application sees it; ``SyncCommit`` is a commitSync's retry
loop (ConsumerCoordinator.commitOffsetsSync) and ``SyncCommits`` all of them;
``CommittedOffsetsLookup`` is fetchCommittedOffsets' retry state; ``offset_fetch_error`` reads an
OffsetFetch answer as OffsetFetchResponseHandler does. Like ``members.metadata``, nothing here
sends a request or sets a timer: the ``Consumer`` sends the OffsetCommit / OffsetFetch requests,
sets the ``commit-retry`` timer at ``SyncCommits.next_wakeup`` and wakes the application for an
OffsetFetch retry.
"""

from __future__ import annotations

from collections.abc import Iterator

from attrs import define

from assignors.api import TopicPartition
from coordinator.errors import NO_ERROR, Errors
from coordinator.protocol import OffsetFetchResponse
from members.backoff import ExponentialBackoff


@define
class CommitResult:
    """One offset commit, as the application saw it (``error`` None = success)."""

    t_ms: int
    purpose: str  # "auto" | "manual" | "join-prepare" | "close"
    offsets: dict[TopicPartition, int]
    generation_id: int
    error: str | None = None  # Errors name, or COMMIT_FAILED / REBALANCE_IN_PROGRESS (client side)
    done: bool = False
    retriable: bool = False
    #: How many times it has been sent: franz-go 1.4's commitAcrossRebalance counts its tries.
    tries: int = 1


@define
class SyncCommit:
    """A commitSync in progress (ConsumerCoordinator.commitOffsetsSync's retry loop)."""

    op: CommitResult
    deadline_ms: int
    attempts: int = 0
    retry_at: int | None = None  # backing off until then; None: in flight or awaiting coordinator
    in_flight: bool = False


class SyncCommits:
    """The commitSync calls in progress (commitOffsetsSync's loops: retry a retriable failure
    after the exponential backoff, wait for an unknown coordinator, until the deadline)."""

    __slots__ = ("_backoff", "_pending")

    def __init__(self, backoff: ExponentialBackoff) -> None:
        self._backoff = backoff
        self._pending: list[SyncCommit] = []

    def add(self, op: CommitResult, deadline_ms: int) -> None:
        self._pending.append(SyncCommit(op, deadline_ms))

    def of(self, op: CommitResult) -> SyncCommit | None:
        """The commitSync loop ``op`` belongs to; None for an async commit."""
        for sync in self._pending:
            if sync.op is op:
                return sync
        return None

    def __iter__(self) -> Iterator[SyncCommit]:
        """The loops in progress, in call order (a copy: finishing one removes it)."""
        return iter(list(self._pending))

    def __bool__(self) -> bool:
        return bool(self._pending)

    def next_wakeup(self) -> int | None:
        """The earliest next retry or deadline of any loop (one timer serves them all)."""
        if not self._pending:
            return None
        return min(
            s.deadline_ms if s.retry_at is None else min(s.retry_at, s.deadline_ms)
            for s in self._pending
        )

    def back_off(self, sync: SyncCommit, now: int) -> int:
        """A retriable failure: sleep the exponential backoff, at most until the deadline; when
        the retry is due."""
        delay = self._backoff.backoff(sync.attempts)
        sync.attempts += 1
        sync.retry_at = min(now + delay, sync.deadline_ms)
        return sync.retry_at

    def finish(self, sync: SyncCommit) -> None:
        """The loop is over (a success, a non-retriable failure, or its deadline)."""
        self._pending.remove(sync)


class CommittedOffsetsLookup:
    """fetchCommittedOffsets for the owned partitions without a position: the OffsetFetch in
    flight, and after a retriable failure the exponential backoff (KIP-580) before the next."""

    __slots__ = ("_backoff", "attempts", "in_flight", "retry_at")

    def __init__(self, backoff: ExponentialBackoff) -> None:
        self._backoff = backoff
        #: The OffsetFetch in flight (its correlation id).
        self.in_flight: int | None = None
        #: Failed attempts of the current lookup.
        self.attempts = 0
        #: Backing off until then (None: not backing off).
        self.retry_at: int | None = None

    def restart(self) -> None:
        """A new lookup (a new assignment, or an answer): its attempts start again, no
        backoff."""
        self.retry_at = None
        self.attempts = 0

    def failed(self, now: int) -> None:
        """A retriable failure: the next attempt waits the exponential backoff."""
        delay = self._backoff.backoff(self.attempts)
        self.attempts += 1
        self.retry_at = now + delay


def offset_fetch_error(resp: OffsetFetchResponse) -> tuple[Errors, bool]:
    """The error an OffsetFetch answer fails with, and whether it is retriable
    (OffsetFetchResponseHandler.handle): a group-level error, retriable as its exception is;
    else the first partition error other than TOPIC_AUTHORIZATION_FAILED (collected, the answer
    failing with it after the loop) and UNSTABLE_OFFSET_COMMIT (the only retriable one, when
    nothing worse is found), UNKNOWN_TOPIC_OR_PARTITION included (a KafkaException here).
    ``(NONE, False)`` when every partition has its offset."""
    if resp.error_code != NO_ERROR:
        return resp.error_code, resp.error_code.retriable
    unauthorized = unstable = False
    for topic in resp.topics:
        for p in topic.partitions:
            code = p.error_code
            if code == NO_ERROR:
                continue
            if code == Errors.TOPIC_AUTHORIZATION_FAILED:
                unauthorized = True
            elif code == Errors.UNSTABLE_OFFSET_COMMIT:
                unstable = True
            else:
                return code, False
    if unauthorized:
        return Errors.TOPIC_AUTHORIZATION_FAILED, False
    if unstable:
        return Errors.UNSTABLE_OFFSET_COMMIT, True
    return NO_ERROR, False
