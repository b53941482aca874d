"""A simulated ZooKeeper ensemble: what Kafka 0.8's consumers coordinated through (seed 004,
design 1). Sans-I/O and deterministic: no clock, the caller passes ``now_ms``; watch
notifications come back as values for the caller to deliver."""

from coordinator.zookeeper.ensemble import (
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    SessionExpiredError,
    WatchedEvent,
    ZkError,
    Znode,
    ZooKeeperEnsemble,
)

__all__ = [
    "NoNodeError",
    "NodeExistsError",
    "NotEmptyError",
    "SessionExpiredError",
    "WatchedEvent",
    "ZkError",
    "Znode",
    "ZooKeeperEnsemble",
]
