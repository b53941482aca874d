"""What the managers of one shard share besides the timer: writing to the partition, answering.

Kafka's GroupMetadataManager and OffsetMetadataManager return records and responses in a
CoordinatorResult, and the runtime (CoordinatorRuntime with its PartitionWriter) writes the
records and completes the responses. Here appends are synchronous, so a manager writes through
the shard's ``PartitionWriter`` and learns at once whether the batch landed; a response to a
request (answered now or parked until later) goes out through ``respond``. Both put their effect
and their event into the call's ``Step``.
"""

from __future__ import annotations

from collections.abc import Sequence

from coordinator.effects import Send
from coordinator.errors import ERROR_NAMES, NO_ERROR, Errors
from coordinator.group import Parked
from coordinator.log import AppendFailed, OffsetsLog
from coordinator.protocol import API_NAMES, api_name, response_error
from coordinator.records import (
    NO_PRODUCER_ID,
    ControlRecordKey,
    EndTransactionMarkerValue,
    Record,
    RecordKey,
    RecordValue,
)
from coordinator.result import Step

# A record key's type -> the name the event log gives it ("OffsetCommit", "GroupMetadata", ...)
_RECORD_TYPES: dict[type, str] = {}


class PartitionWriter:
    """Appends batches to this shard's ``__consumer_offsets`` partition and reports each record."""

    __slots__ = ("log", "node", "partition")

    def __init__(self, log: OffsetsLog, node: str, partition: int) -> None:
        self.log = log
        self.node = node
        self.partition = partition

    def append(
        self, out: Step, entries: Sequence[tuple[RecordKey, RecordValue]], group_id: str
    ) -> Errors:
        """Append a batch; NONE or the (unmapped) append error."""
        return self.append_records(out, entries, group_id)[0]

    def append_records(
        self,
        out: Step,
        entries: Sequence[tuple[RecordKey, RecordValue]],
        group_id: str,
        producer_id: int = NO_PRODUCER_ID,
    ) -> tuple[Errors, tuple[Record, ...]]:
        """Append a batch (of ``producer_id``'s transaction, if given); the error (NONE or the
        unmapped append error) and the records written, whose log offsets replay keeps."""
        try:
            records = self.log.append(self.partition, entries, out.now, producer_id)
        except AppendFailed as failure:
            out.event(
                "append_failed",
                t_ms=out.now,
                node=self.node,
                partition=self.partition,
                group_id=group_id,
                error=failure.error.name,
            )
            out.append_error = failure.error
            return failure.error, ()
        out.appends += 1
        events, now, node, partition = out.events, out.now, self.node, self.partition
        for (key, _), record in zip(entries, records, strict=True):
            record_type = _RECORD_TYPES.get(type(key))
            if record_type is None:
                record_type = _RECORD_TYPES[type(key)] = type(key).__name__.removesuffix("Key")
            events.append(  # out.event, spelled out: every commit writes records
                (
                    "record_appended",
                    {
                        "t_ms": now,
                        "node": node,
                        "partition": partition,
                        "offset": record.offset,
                        "group_id": key.group,  # one batch can hold several groups' records
                        "record_type": record_type,
                        "tombstone": record.value is None,
                    },
                )
            )
        return NO_ERROR, records

    def append_end_transaction_marker(self, out: Step, producer_id: int, commit: bool) -> Errors:
        """CoordinatorRuntime.completeTransaction's write: the marker, a control batch of the
        producer (MemoryRecords.withEndTransactionMarker); NONE or the append error."""
        result = "COMMIT" if commit else "ABORT"
        try:
            (record,) = self.log.append(
                self.partition,
                [(ControlRecordKey(result), EndTransactionMarkerValue())],
                out.now,
                producer_id,
            )
        except AppendFailed as failure:
            out.event(
                "txn_marker_failed",
                t_ms=out.now,
                node=self.node,
                partition=self.partition,
                producer_id=producer_id,
                result=result,
                error=failure.error.name,
            )
            out.append_error = failure.error
            return failure.error
        out.appends += 1
        out.event(
            "txn_marker_appended",
            t_ms=out.now,
            node=self.node,
            partition=self.partition,
            offset=record.offset,
            producer_id=producer_id,
            result=result,
        )
        return NO_ERROR


def respond(
    out: Step,
    node: str,
    waiter: Parked,
    response: object,
    group_id: str,
    member_id: str | None = None,
    generation_id: int | None = None,
) -> None:
    """Answer the request ``waiter`` from ``node`` (now, or one parked until now)."""
    error = getattr(response, "error_code", None)  # response_error's first case, without the call
    if error is None:
        error = response_error(response)
        if error is None:
            error = NO_ERROR
    api = API_NAMES.get(type(response))  # api_name's memo first: one call less per answer
    if api is None:
        api = api_name(response)
    src, correlation_id = waiter.src, waiter.correlation_id
    out.events.append(  # out.event, spelled out: every answer is logged
        (
            "response_sent",
            {
                "t_ms": out.now,
                "node": node,
                "api": api,
                # exact type: an enum with members cannot be subclassed, so it is isinstance
                "error": ERROR_NAMES[error] if type(error) is Errors else str(error),
                "group_id": group_id,
                "member_id": member_id,
                "generation_id": generation_id
                if generation_id is not None
                else getattr(response, "generation_id", None),
                "correlation_id": correlation_id,
                "src": node,
                "dst": src,
            },
        )
    )
    out.effects.append(Send(node, src, correlation_id, response))
