"""Finding an assignor by name: ``get_assignor("range")``, Kafka's class names, or a user's class.

Accepted names, matched case-sensitively like Kafka's ``partition.assignment.strategy``:

* the short protocol names: ``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky``,
  ``legacy-range``, ``legacy-roundrobin``, and any name added with :func:`register_assignor`;
* Kafka's class names, e.g. ``org.apache.kafka.clients.consumer.RangeAssignor``;
* the names of assignors installed under the ``groupsim.assignors`` entry-point group (a
  package's ``[project.entry-points."groupsim.assignors"] mine = "mypkg.mod:MyAssignor"``);
* ``package.module:ClassName`` for a user's own :class:`~assignors.api.PartitionAssignor`
  subclass (the module must be importable). Scenario files may use this form only when the
  user allows it (``--allow-code``): see the README's "Trust" section.

The sticky assignors live in their own modules and are imported only when asked for, so a
missing or broken sticky module never breaks ``range``.
"""

from __future__ import annotations

import difflib
import importlib
from importlib import metadata
from typing import Any

from assignors.api import PartitionAssignor

# short name -> "module:Class"
_BUILTINS: dict[str, str] = {
    "range": "assignors.range:RangeAssignor",
    "roundrobin": "assignors.roundrobin:RoundRobinAssignor",
    "sticky": "assignors.sticky:StickyAssignor",
    "cooperative-sticky": "assignors.cooperative_sticky:CooperativeStickyAssignor",
    "legacy-range": "assignors.legacy:LegacyRangeAssignor",
    "legacy-roundrobin": "assignors.legacy:LegacyRoundRobinAssignor",
}

_KAFKA_PACKAGE = "org.apache.kafka.clients.consumer."
KAFKA_CLASS_NAMES: dict[str, str] = {
    _KAFKA_PACKAGE + "RangeAssignor": "range",
    _KAFKA_PACKAGE + "RoundRobinAssignor": "roundrobin",
    _KAFKA_PACKAGE + "StickyAssignor": "sticky",
    _KAFKA_PACKAGE + "CooperativeStickyAssignor": "cooperative-sticky",
    # The ZooKeeper consumer's strategy names were plain "range" / "roundrobin"; its classes:
    "kafka.consumer.RangeAssignor": "legacy-range",
    "kafka.consumer.RoundRobinAssignor": "legacy-roundrobin",
}

_registered: dict[str, type[PartitionAssignor]] = {}

ENTRY_POINT_GROUP = "groupsim.assignors"


class UnknownAssignorError(ValueError):
    """No assignor has that name; the message lists the known names."""


def available_assignors() -> list[str]:
    """Every short name ``get_assignor`` accepts (built-in and registered), sorted."""
    return sorted(set(_BUILTINS) | set(_registered) | set(_entry_points()))


def _entry_points() -> dict[str, metadata.EntryPoint]:
    """Installed plugins: entry points of the ``groupsim.assignors`` group, by name.

    Installing a package is the user's explicit choice to trust it, so its assignors may be named
    by scenario files; they are imported only when named.
    """
    try:
        return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}
    except Exception:  # a broken distribution's metadata must not break the built-in names
        return {}


def _load_entry_point(ep: metadata.EntryPoint) -> type[PartitionAssignor]:
    try:
        cls = ep.load()
    except Exception as exc:
        raise UnknownAssignorError(
            f"assignor {ep.name!r} (entry point {ep.value!r} of {ENTRY_POINT_GROUP!r}) "
            f"cannot be loaded: {type(exc).__name__}: {exc}"
        ) from exc
    if not (isinstance(cls, type) and issubclass(cls, PartitionAssignor)):
        raise UnknownAssignorError(
            f"assignor {ep.name!r}: entry point {ep.value!r} is not a PartitionAssignor subclass"
        )
    return cls


def register_assignor(cls: type[PartitionAssignor]) -> type[PartitionAssignor]:
    """Make a user's assignor class available under its ``name``; usable as a class decorator."""
    if not (isinstance(cls, type) and issubclass(cls, PartitionAssignor)):
        raise TypeError(f"{cls!r} is not a PartitionAssignor subclass")
    if not cls.name:
        raise ValueError(f"{cls.__qualname__} must set a non-empty class attribute 'name'")
    if cls.name in _BUILTINS:
        raise ValueError(f"{cls.name!r} is a built-in assignor name; choose another")
    _registered[cls.name] = cls
    return cls


def get_assignor(name: str, **options: Any) -> PartitionAssignor:
    """A fresh assignor instance for ``name``; ``options`` go to its constructor.

    Raises :class:`UnknownAssignorError` (a ``ValueError``) for names that match nothing, with the
    list of known names and a did-you-mean suggestion.
    """
    if not isinstance(name, str) or not name.strip():
        raise UnknownAssignorError(f"assignor name must be a non-empty string, got {name!r}")
    name = name.strip()
    short = KAFKA_CLASS_NAMES.get(name, name)
    if short in _registered:
        return _registered[short](**options)
    if short in _BUILTINS:
        return _instantiate(_load(_BUILTINS[short], short), options)
    if ":" not in name:
        plugin = _entry_points().get(short)
        if plugin is not None:
            return _instantiate(_load_entry_point(plugin), options)
    if ":" in name:
        return _instantiate(_load(name, name), options)
    raise UnknownAssignorError(_unknown_message(name))


def _unknown_message(name: str) -> str:
    known = available_assignors()
    candidates = known + list(KAFKA_CLASS_NAMES)
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    if not close:
        close = difflib.get_close_matches(
            name.lower(), [c.lower() for c in candidates], n=1, cutoff=0.6
        )
        close = [c for c in candidates if c.lower() in close][:1]
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return (
        f"unknown assignor {name!r}.{hint} Known: {', '.join(known)}; Kafka class names "
        f"({', '.join(sorted(KAFKA_CLASS_NAMES))}); an installed '{ENTRY_POINT_GROUP}' entry "
        "point; or 'package.module:Class' for your own."
    )


def _load(target: str, shown_as: str) -> type[PartitionAssignor]:
    module_name, _, class_name = target.partition(":")
    if not module_name or not class_name:
        raise UnknownAssignorError(f"{shown_as!r}: expected 'package.module:ClassName'")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise UnknownAssignorError(
            f"assignor {shown_as!r}: module {module_name!r} cannot be imported ({exc})"
        ) from exc
    cls = getattr(module, class_name, None)
    if cls is None:
        raise UnknownAssignorError(
            f"assignor {shown_as!r}: module {module_name!r} has no {class_name!r}"
        )
    if not (isinstance(cls, type) and issubclass(cls, PartitionAssignor)):
        raise UnknownAssignorError(
            f"assignor {shown_as!r}: {module_name}.{class_name} is not a PartitionAssignor subclass"
        )
    return cls


def _instantiate(cls: type[PartitionAssignor], options: dict[str, Any]) -> PartitionAssignor:
    try:
        return cls(**options)
    except TypeError as exc:
        raise TypeError(f"cannot build {cls.__qualname__} with options {options}: {exc}") from exc
