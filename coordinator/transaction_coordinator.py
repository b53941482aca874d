"""The transaction coordinator's part of a read-process-write transaction, as groupsim models it:
the ``__consumer_offsets`` partitions each producer's open transaction holds (AddOffsetsToTxn)
and the markers its EndTxn writes there (Kafka: WriteTxnMarkers, then
GroupCoordinatorService.completeTransaction on each partition).

Not modelled (docs/coordinator.md): ``__transaction_state`` and where its coordinator lives (the
broker a request reaches answers it), InitProducerId and producer-epoch fencing, the transaction
timeout, and asynchronous markers: EndTxn writes the markers before it answers and fails with
the offsets coordinator's error (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, a failed write),
which the producer retries; Kafka's transaction coordinator answers once the transaction is
prepared and retries the markers itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coordinator.errors import Errors
from coordinator.protocol import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
)
from coordinator.result import Step

if TYPE_CHECKING:
    from coordinator.service import GroupCoordinatorService


class TransactionCoordinator:
    """Each open transaction's offsets partitions, by producer id."""

    __slots__ = ("partitions", "service")

    def __init__(self, service: GroupCoordinatorService) -> None:
        self.service = service
        self.partitions: dict[int, dict[int, None]] = {}

    def add_offsets(self, request: AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse:
        """AddOffsetsToTxn: the group's offsets partition joins the producer's transaction."""
        if not request.group_id:
            return AddOffsetsToTxnResponse(Errors.INVALID_GROUP_ID)
        partition = self.service.partition_for(request.group_id)
        self.partitions.setdefault(request.producer_id, {})[partition] = None
        return AddOffsetsToTxnResponse(Errors.NONE)

    def end_txn(self, out: Step, request: EndTxnRequest) -> EndTxnResponse:
        """EndTxn: the COMMIT or ABORT marker on every partition of the transaction, in the
        order they joined it; the first that cannot be written fails the request (the written
        ones are done, the rest wait for the retry)."""
        partitions = self.partitions.get(request.producer_id, {})
        for partition in list(partitions):
            error = self.service.complete_transaction(
                out, partition, request.producer_id, request.committed
            )
            if error != Errors.NONE:
                return EndTxnResponse(error)
            del partitions[partition]
        self.partitions.pop(request.producer_id, None)
        return EndTxnResponse(Errors.NONE)
