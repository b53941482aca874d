"""A consumer's exactly-once read-process-write loop: its transactional producer committing the
consumed offsets inside transactions (KIP-98, KIP-447), sans-I/O.

Every ``transaction_interval_ms`` (what Kafka Streams' ``commit.interval.ms`` is under
exactly-once) the application does what ``producer.sendOffsetsToTransaction(offsets,
consumer.groupMetadata())`` and ``producer.commitTransaction()`` do in Kafka's
TransactionManager: AddOffsetsToTxn (the group's offsets partition joins the transaction),
TxnOffsetCommit to the group coordinator with the consumer's group metadata (group id,
generation id, member id, group instance id: KIP-447, the coordinator fences a zombie whose
generation is gone), then EndTxn. TxnOffsetCommitHandler's answers: ILLEGAL_GENERATION and
UNKNOWN_MEMBER_ID (a CommitFailedException) and FENCED_INSTANCE_ID are abortable errors, so the
application aborts the transaction (EndTxn ABORT); coordinator and retriable errors are retried
after ``retry.backoff.ms``; anything else is fatal to the producer, which here aborts too.

What the transaction would also carry (the records the application produces) is not modelled,
nor InitProducerId: the producer id is derived from the transactional id, epoch 0. Nothing here
sends a request or sets a timer: the ``Consumer`` sends what :meth:`ExactlyOnce.begin` and
:meth:`ExactlyOnce.on_response` return and wakes the application at :meth:`next_wakeup`.
"""

from __future__ import annotations

from enum import Enum

from attrs import define

from assignors.api import TopicPartition
from coordinator.errors import Errors
from coordinator.java import java_string_hashcode
from coordinator.protocol import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
    TxnOffsetCommitResponse,
)

#: TxnOffsetCommitHandler's abortable errors: the group metadata no longer matches.
ABORTABLE = frozenset(
    {
        Errors.ILLEGAL_GENERATION,
        Errors.UNKNOWN_MEMBER_ID,
        Errors.FENCED_INSTANCE_ID,
        Errors.GROUP_AUTHORIZATION_FAILED,
    }
)
#: Errors a request of the transaction is sent again for (after the backoff).
RETRIABLE = frozenset(
    {
        Errors.COORDINATOR_NOT_AVAILABLE,
        Errors.NOT_COORDINATOR,
        Errors.REQUEST_TIMED_OUT,
        Errors.COORDINATOR_LOAD_IN_PROGRESS,
        Errors.UNKNOWN_TOPIC_OR_PARTITION,
        Errors.NOT_ENOUGH_REPLICAS,
        Errors.NETWORK_EXCEPTION,
    }
)

#: The requests of a transaction (their API names) and the answers the consumer hands here.
TXN_APIS = frozenset({"AddOffsetsToTxn", "TxnOffsetCommit", "EndTxn"})
TXN_RESPONSES = (AddOffsetsToTxnResponse, TxnOffsetCommitResponse, EndTxnResponse)

PRODUCER_ID_BASE = 1000


def producer_id_for(transactional_id: str) -> int:
    """The producer id of a transactional id (InitProducerId is not modelled): stable across
    runs and restarts."""
    return PRODUCER_ID_BASE + (java_string_hashcode(transactional_id) & 0x7FFFFFFF) % 1_000_000


class TxnStep(Enum):
    """Where the open transaction is: which request is out (or waiting for its retry)."""

    IDLE = "idle"
    ADD_OFFSETS = "add_offsets"
    COMMIT_OFFSETS = "commit_offsets"
    END = "end"


@define
class Transaction:
    """One transaction: the offsets it commits and the group metadata it carries."""

    offsets: dict[TopicPartition, int]
    generation_id: int
    member_id: str
    committed: bool = True  # False once an abortable error decided to abort
    error: str | None = None  # why it aborts


@define
class TxnOutcome:
    """A transaction that ended (its EndTxn was answered NONE)."""

    transaction: Transaction


class ExactlyOnce:
    """The transactional producer of one consumer: one transaction at a time."""

    __slots__ = (
        "group_id",
        "instance_id",
        "interval_ms",
        "next_due",
        "producer_epoch",
        "producer_id",
        "retry_at",
        "retry_backoff_ms",
        "step",
        "transaction",
        "transactional_id",
    )

    def __init__(
        self,
        *,
        group_id: str,
        transactional_id: str,
        interval_ms: int,
        retry_backoff_ms: int,
        instance_id: str | None,
    ) -> None:
        self.group_id = group_id
        self.transactional_id = transactional_id
        self.instance_id = instance_id
        self.interval_ms = interval_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.producer_id = producer_id_for(transactional_id)
        self.producer_epoch = 0
        self.next_due = interval_ms
        self.step = TxnStep.IDLE
        self.transaction: Transaction | None = None
        #: A request of the open transaction failed retriably: sent again at this time.
        self.retry_at: int | None = None

    def restart(self, now: int) -> None:
        """A new incarnation (restart): no transaction open, the next one an interval away.
        (Kafka's transaction coordinator would abort the old one at its timeout.)"""
        self.step = TxnStep.IDLE
        self.transaction = None
        self.retry_at = None
        self.next_due = now + self.interval_ms

    def next_wakeup(self) -> int | None:
        """When the application must act on its own: the next transaction, or a retry."""
        if self.step is TxnStep.IDLE:
            return self.next_due
        return self.retry_at

    def begin(
        self, now: int, offsets: dict[TopicPartition, int], generation_id: int, member_id: str
    ) -> AddOffsetsToTxnRequest | None:
        """Start the transaction committing ``offsets`` with this group metadata (None:
        nothing consumed, no transaction)."""
        self.next_due = now + self.interval_ms
        if self.step is not TxnStep.IDLE or not offsets:
            return None
        self.transaction = Transaction(dict(offsets), generation_id, member_id)
        self.step = TxnStep.ADD_OFFSETS
        return AddOffsetsToTxnRequest(
            self.transactional_id, self.producer_id, self.producer_epoch, self.group_id
        )

    def due_retry(self, now: int) -> object | None:
        """The request to send again, if its retry is due."""
        if self.retry_at is None or now < self.retry_at:
            return None
        self.retry_at = None
        return self._request()

    def failed(self, now: int) -> None:
        """The request in flight was lost (disconnect, timeout): retried after the backoff."""
        if self.step is not TxnStep.IDLE:
            self.retry_at = now + self.retry_backoff_ms

    def on_response(self, message: object, now: int) -> tuple[object | None, TxnOutcome | None]:
        """An answer of the transaction's current request: the next request to send now, and
        the transaction when it ended."""
        txn = self.transaction
        if txn is None:
            return None, None
        if isinstance(message, AddOffsetsToTxnResponse) and self.step is TxnStep.ADD_OFFSETS:
            error = message.error_code
            if error == Errors.NONE:
                self.step = TxnStep.COMMIT_OFFSETS
            elif error not in RETRIABLE:
                self._abort(error)
            return self._next(error, now), None
        if isinstance(message, TxnOffsetCommitResponse) and self.step is TxnStep.COMMIT_OFFSETS:
            error = _first_error(message)
            if error == Errors.NONE:
                self.step = TxnStep.END
            elif error not in RETRIABLE:
                self._abort(error)  # abortable (CommitFailedException ...) or fatal
            return self._next(error, now), None
        if isinstance(message, EndTxnResponse) and self.step is TxnStep.END:
            error = message.error_code
            if error == Errors.NONE:
                self.step = TxnStep.IDLE
                self.transaction = None
                return None, TxnOutcome(txn)
            if error not in RETRIABLE:  # not modelled further: the transaction is given up
                txn.committed, txn.error = False, txn.error or error.name
                self.step = TxnStep.IDLE
                self.transaction = None
                return None, TxnOutcome(txn)
            return self._next(error, now), None
        return None, None

    # ------------------------------------------------------------------ internals

    def _abort(self, error: Errors) -> None:
        """abortableError / fatalError: the application calls abortTransaction()."""
        assert self.transaction is not None
        self.transaction.committed = False
        self.transaction.error = error.name
        self.step = TxnStep.END

    def _next(self, error: Errors, now: int) -> object | None:
        if error in RETRIABLE:
            self.retry_at = now + self.retry_backoff_ms
            return None
        return self._request()

    def _request(self) -> object:
        txn = self.transaction
        assert txn is not None
        if self.step is TxnStep.ADD_OFFSETS:
            return AddOffsetsToTxnRequest(
                self.transactional_id, self.producer_id, self.producer_epoch, self.group_id
            )
        if self.step is TxnStep.COMMIT_OFFSETS:
            by_topic: dict[str, list[TxnOffsetCommitRequestPartition]] = {}
            for tp in sorted(txn.offsets):
                by_topic.setdefault(tp.topic, []).append(
                    TxnOffsetCommitRequestPartition(tp.partition, txn.offsets[tp])
                )
            return TxnOffsetCommitRequest(
                transactional_id=self.transactional_id,
                group_id=self.group_id,
                producer_id=self.producer_id,
                producer_epoch=self.producer_epoch,
                topics=tuple(
                    TxnOffsetCommitRequestTopic(t, tuple(ps)) for t, ps in by_topic.items()
                ),
                generation_id=txn.generation_id,
                member_id=txn.member_id,
                group_instance_id=self.instance_id,
            )
        return EndTxnRequest(
            self.transactional_id, self.producer_id, self.producer_epoch, txn.committed
        )


def _first_error(message: TxnOffsetCommitResponse) -> Errors:
    """The answer's error as TxnOffsetCommitHandler acts on it: an abortable or fatal error
    wins over a retriable one, which wins over NONE."""
    worst = Errors.NONE
    for topic in message.topics:
        for p in topic.partitions:
            if p.error_code == Errors.NONE:
                continue
            if p.error_code not in RETRIABLE:
                return p.error_code
            worst = p.error_code
    return worst
