"""Partition assignors: range, roundrobin, sticky, cooperative-sticky, the ZooKeeper-era ones,
and custom ones. Start with :func:`get_assignor`; the contract is in :mod:`assignors.api`."""

from assignors.api import (
    Assignment,
    ClusterMetadata,
    PartitionAssignor,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
    partitions_of,
)
from assignors.registry import (
    UnknownAssignorError,
    available_assignors,
    get_assignor,
    register_assignor,
)

__all__ = [
    "Assignment",
    "ClusterMetadata",
    "PartitionAssignor",
    "RebalanceProtocol",
    "Subscription",
    "TopicPartition",
    "UnknownAssignorError",
    "available_assignors",
    "get_assignor",
    "partitions_of",
    "register_assignor",
]
