"""Server-side assignors by name: ``group.consumer.assignors`` and the preferred-assignor choice.

Kafka's broker config ``group.consumer.assignors`` is a list of class names (default: Kafka's
``UniformAssignor`` then ``RangeAssignor``); ``GroupMetadataManager`` indexes them by
``PartitionAssignor.name()`` and takes the *first* as the default. A member may name one in
``ConsumerGroupHeartbeat.ServerAssignor`` (an unknown name is ``UNSUPPORTED_ASSIGNOR``), and the
group uses the name most members asked for (``ConsumerGroup.computePreferredServerAssignor``),
or the default when none did.

groupsim accepts Kafka's class names, the short names (``uniform``, ``range``), any name added
with :func:`register_assignor`, and ``package.module:Class`` for a user's own class.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

from coordinator.assignor.api import ConsumerGroupPartitionAssignor
from coordinator.java import java_hashmap_order

_PACKAGE = "org.apache.kafka.coordinator.group.assignor."
UNIFORM_CLASS = _PACKAGE + "UniformAssignor"
RANGE_CLASS = _PACKAGE + "RangeAssignor"

#: GroupCoordinatorConfig.CONSUMER_GROUP_ASSIGNORS_DEFAULT
CONSUMER_GROUP_ASSIGNORS_DEFAULT: tuple[str, ...] = (UNIFORM_CLASS, RANGE_CLASS)

_BUILTINS: dict[str, str] = {
    "uniform": "coordinator.assignor.uniform:UniformAssignor",
    "range": "coordinator.assignor.range:RangeAssignor",
}
KAFKA_CLASS_NAMES: dict[str, str] = {UNIFORM_CLASS: "uniform", RANGE_CLASS: "range"}

_registered: dict[str, Callable[[], ConsumerGroupPartitionAssignor]] = {}


class UnknownServerAssignorError(ValueError):
    """No server-side assignor has that name; the message lists the known ones."""


def register_assignor(name: str, factory: Callable[[], ConsumerGroupPartitionAssignor]) -> None:
    """Make ``name`` usable in ``group.consumer.assignors`` (the extension point)."""
    _registered[name] = factory


def available_assignors() -> list[str]:
    return sorted(set(_BUILTINS) | set(_registered))


def _load(path: str) -> Callable[[], ConsumerGroupPartitionAssignor]:
    module_name, _, attr = path.partition(":")
    try:
        factory: Callable[[], ConsumerGroupPartitionAssignor] = getattr(
            importlib.import_module(module_name), attr
        )
    except (ImportError, AttributeError) as exc:
        raise UnknownServerAssignorError(f"cannot load server assignor {path!r}: {exc}") from None
    return factory


def get_assignor(name: str) -> ConsumerGroupPartitionAssignor:
    """A new assignor for a short name, Kafka class name or ``module:Class``."""
    short = KAFKA_CLASS_NAMES.get(name, name)
    if short in _registered:
        return _registered[short]()
    if short in _BUILTINS:
        return _load(_BUILTINS[short])()
    if ":" in name:
        return _load(name)()
    raise UnknownServerAssignorError(
        f"unknown server assignor {name!r}; known: {', '.join(available_assignors())} "
        f"(or Kafka's class names {', '.join(CONSUMER_GROUP_ASSIGNORS_DEFAULT)})"
    )


class ConsumerGroupAssignors:
    """The configured assignors as GroupMetadataManager holds them: by ``name()``, the first
    configured one the default."""

    def __init__(self, names: Sequence[str] = CONSUMER_GROUP_ASSIGNORS_DEFAULT) -> None:
        if not names:
            raise ValueError("group.consumer.assignors must name at least one assignor")
        assignors = [get_assignor(n) for n in names]
        self.by_name: dict[str, ConsumerGroupPartitionAssignor] = {a.name: a for a in assignors}
        self.default = assignors[0]

    def supports(self, name: str | None) -> bool:
        """Whether a heartbeat's ServerAssignor is acceptable (None: no preference)."""
        return name is None or name in self.by_name

    def unsupported_message(self, name: str) -> str:
        """The UNSUPPORTED_ASSIGNOR error message. Kafka joins the names of its
        ``HashMap<String, ConsumerGroupPartitionAssignor>`` in iteration order."""
        names = java_hashmap_order(self.by_name)
        return f"ServerAssignor {name} is not supported. Supported assignors: {', '.join(names)}."
