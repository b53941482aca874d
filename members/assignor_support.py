"""Resolving ``partition.assignment.strategy`` into assignors, and the client's rebalance protocol.

``ConsumerCoordinator``'s constructor takes the intersection of the ``supportedProtocols()`` of
all configured assignors and uses the highest (KIP-429): the default ``[range,
cooperative-sticky]`` is therefore EAGER. A name that ``assignors.get_assignor`` cannot build
(another module may not exist yet) still votes in JoinGroup with Kafka's known protocol support;
if the coordinator then selects it, the leader fails clearly instead of assigning.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from assignors.api import PartitionAssignor, RebalanceProtocol
from members.config import ConfigError

E, C = RebalanceProtocol.EAGER, RebalanceProtocol.COOPERATIVE

#: Kafka's built-in assignors and the protocols they support (ConsumerPartitionAssignor).
KNOWN_PROTOCOLS: dict[str, tuple[RebalanceProtocol, ...]] = {
    "range": (E,),
    "roundrobin": (E,),
    "sticky": (E,),
    "cooperative-sticky": (E, C),
}


@frozen
class ResolvedAssignor:
    name: str
    instance: PartitionAssignor | None
    supported_protocols: tuple[RebalanceProtocol, ...]
    unavailable: str | None = None


def resolve_assignors(strategy: Sequence[str | PartitionAssignor]) -> list[ResolvedAssignor]:
    resolved = []
    for entry in strategy:
        if isinstance(entry, PartitionAssignor):
            resolved.append(ResolvedAssignor(entry.name, entry, tuple(entry.supported_protocols)))
            continue
        try:
            from assignors import get_assignor

            instance = get_assignor(entry)
        except Exception as exc:  # unknown name, or the module is not written yet
            if entry not in KNOWN_PROTOCOLS:
                raise ConfigError(f"partition.assignment.strategy: {exc}") from exc
            resolved.append(ResolvedAssignor(entry, None, KNOWN_PROTOCOLS[entry], str(exc)))
            continue
        resolved.append(ResolvedAssignor(entry, instance, tuple(instance.supported_protocols)))
    return resolved


def rebalance_protocol_of(assignors: Sequence[ResolvedAssignor]) -> RebalanceProtocol:
    """The highest protocol every configured assignor supports."""
    common = set(assignors[0].supported_protocols)
    for a in assignors[1:]:
        common &= set(a.supported_protocols)
    if not common:
        raise ConfigError(
            "Specified assignors "
            f"{[a.name for a in assignors]} do not have commonly supported rebalance protocol"
        )
    return max(common)
