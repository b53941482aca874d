"""``__consumer_offsets``: a replicated log that survives broker failure.

In the simulation every replica holds the same records (appends are acknowledged by all live
replicas at once), so the log is one list per partition owned by the cluster, not by a broker.
An append is atomic: all of its records land, or none do (Kafka writes them as one batch).
"""

from __future__ import annotations

from collections.abc import Sequence

from coordinator.errors import Errors
from coordinator.records import (
    NO_PRODUCER_ID,
    ControlRecordKey,
    EndTransactionMarkerValue,
    Record,
    RecordKey,
    RecordValue,
)


class AppendFailed(Exception):
    def __init__(self, error: Errors) -> None:
        super().__init__(error.name)
        self.error = error


class OffsetsLog:
    def __init__(self, num_partitions: int) -> None:
        self._partitions: list[list[Record]] = [[] for _ in range(num_partitions)]
        self._failures: list[Errors] = []

    @property
    def num_partitions(self) -> int:
        return len(self._partitions)

    def partition(self, p: int) -> tuple[Record, ...]:
        """Every record of partition ``p``, oldest first (uncompacted)."""
        return tuple(self._partitions[p])

    __getitem__ = partition

    def __len__(self) -> int:
        return sum(len(records) for records in self._partitions)

    def fail_next_append(self, error: Errors, count: int = 1) -> None:
        """Fault injection: the next ``count`` appends fail with ``error`` and write nothing."""
        if not isinstance(error, Errors) or error == Errors.NONE:
            raise ValueError(f"an append failure needs a real error, got {error!r}")
        self._failures.extend([error] * count)

    def append(
        self,
        p: int,
        entries: Sequence[
            tuple[RecordKey, RecordValue] | tuple[ControlRecordKey, EndTransactionMarkerValue]
        ],
        now_ms: int,
        producer_id: int = NO_PRODUCER_ID,
    ) -> tuple[Record, ...]:
        """Append ``entries`` as one batch (of ``producer_id``'s transaction, if given); raises
        AppendFailed when a failure was injected."""
        if self._failures:
            raise AppendFailed(self._failures.pop(0))
        log = self._partitions[p]
        out = []
        for key, value in entries:
            record = Record(len(log), key, value, now_ms, producer_id)
            log.append(record)
            out.append(record)
        return tuple(out)

    def latest(self, p: int) -> dict[RecordKey, RecordValue]:
        """The compacted view of partition ``p``: the latest value per key, tombstones kept.

        Transactional records and markers are left out: their offsets depend on the markers,
        which the loader replays in log order (``coordinator/loading.py``).
        """
        out: dict[RecordKey, RecordValue] = {}
        for record in self._partitions[p]:
            key, value = record.key, record.value
            if (
                record.producer_id != NO_PRODUCER_ID
                or isinstance(key, ControlRecordKey)
                or isinstance(value, EndTransactionMarkerValue)
            ):
                continue
            out.pop(key, None)
            out[key] = value
        return out


def append_error_to_response_error(error: Errors) -> Errors:
    """GroupMetadataManager.appendGroupMetadataErrorToResponseError."""
    if error in (
        Errors.UNKNOWN_TOPIC_OR_PARTITION,
        Errors.NOT_ENOUGH_REPLICAS,
        Errors.REQUEST_TIMED_OUT,
    ):
        return Errors.COORDINATOR_NOT_AVAILABLE
    if error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR):
        return Errors.NOT_COORDINATOR
    if error in (Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE, Errors.INVALID_FETCH_SIZE):
        return Errors.UNKNOWN_SERVER_ERROR
    return error


def operation_error_to_response_error(error: Errors) -> Errors:
    """CoordinatorOperationExceptionHelper.handleOperationException: the error a failed write
    operation (OffsetCommit, DeleteGroups) is answered with by GroupCoordinatorService.

    The append errors map as for a group's own writes (above); NETWORK_EXCEPTION, which a
    transaction's verification can raise and old clients would not retry, becomes
    COORDINATOR_LOAD_IN_PROGRESS.
    """
    if error == Errors.NETWORK_EXCEPTION:
        return Errors.COORDINATOR_LOAD_IN_PROGRESS
    return append_error_to_response_error(error)
