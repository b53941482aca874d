"""The consumer's offsets: ConsumerCoordinator's commit and OffsetFetch parts, as values.

``CommitResult`` is one commit as the application sees it; ``SyncCommit`` is a commitSync's retry
loop (ConsumerCoordinator.commitOffsetsSync); ``offset_fetch_error`` reads an OffsetFetch answer
as OffsetFetchResponseHandler does.
"""

from __future__ import annotations

from attrs import define

from assignors.api import TopicPartition
from coordinator.errors import Errors
from coordinator.protocol import OffsetFetchResponse


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


@define
class SyncCommit:
    """A commitSync in progress (ConsumerCoordinator.commitOffsetsSync's retry loop)."""

    op: CommitResult
    deadline_ms: int
    attempts: int = 0
    retry_at: int | None = None  # backing off until then; None: in flight or awaiting coordinator
    in_flight: bool = False


def offset_fetch_error(resp: OffsetFetchResponse) -> tuple[Errors, bool]:
    """The error an OffsetFetch answer fails with, and whether it is retriable
    (OffsetFetchResponseHandler.handle): a group-level error, retriable as its exception is;
    else the first partition error other than TOPIC_AUTHORIZATION_FAILED (collected, the answer
    failing with it after the loop) and UNSTABLE_OFFSET_COMMIT (the only retriable one, when
    nothing worse is found), UNKNOWN_TOPIC_OR_PARTITION included (a KafkaException here).
    ``(NONE, False)`` when every partition has its offset."""
    if resp.error_code != Errors.NONE:
        return resp.error_code, resp.error_code.retriable
    unauthorized = unstable = False
    for topic in resp.topics:
        for p in topic.partitions:
            code = p.error_code
            if code == Errors.NONE:
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
    return Errors.NONE, False
