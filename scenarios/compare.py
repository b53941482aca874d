"""One scenario under several group protocols, side by side (``groupsim compare``).

A *variant* rewrites the scenario's data before it is loaded: the group protocol and assignor of
every consumer (classic eager ``range``, classic ``cooperative-sticky``, static membership, the
consumer protocol KIP-848 with the ``uniform`` server assignor), or a user's dotted-path overrides
(``name=path:value,...``, as ``scenarios.overrides``). Every variant runs with the same seed and
without the scenario's expectations (they were written for one protocol). The measures come from
the consumers' own events, so they mean the same under both protocols:

* ``partitions_moved``: a partition assigned to a consumer other than its last owner;
* ``partitions_revoked``: partitions given up (onPartitionsRevoked / onPartitionsLost);
* ``unowned_partition_ms``: partition-time without an owner after having one
  (``history.unowned_partition_ms``);
* ``assignments``: assignments received (classic: one per member per generation; KIP-848: one per
  new target assignment);
* ``last_change_ms``: when the last partition changed hands (the run has converged since);
* ``consumer_errors``: error answers the consumers received (any API).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from attrs import asdict, frozen

from coordinator import events as ev
from scenarios.history import unowned_partition_ms
from scenarios.overrides import apply_overrides

#: The settings the consumer protocol refuses (members.config.CLASSIC_ONLY_SETTINGS).
_CLASSIC_ONLY = ("partition.assignment.strategy", "heartbeat.interval.ms", "session.timeout.ms")


def _consumer_configs(data: dict[str, Any]) -> Iterable[dict[str, Any]]:
    """The ``defaults`` mapping and each consumer's ``config`` (created if missing)."""
    if not isinstance(data.get("defaults"), dict):
        data["defaults"] = {}
    yield data["defaults"]
    for item in data.get("consumers") or ():
        if isinstance(item, dict):
            if not isinstance(item.get("config"), dict):
                item["config"] = {}
            yield item["config"]


def _classic(strategy: str, static: bool | None = None) -> Callable[[dict[str, Any]], None]:
    def rewrite(data: dict[str, Any]) -> None:
        for config in _consumer_configs(data):
            config.pop("group.protocol", None)
            config.pop("group.remote.assignor", None)
            config.pop("partition.assignment.strategy", None)
        data["defaults"]["partition.assignment.strategy"] = [strategy]
        if static is not None:
            for item in data.get("consumers") or ():
                if isinstance(item, dict):
                    item["static"] = static

    return rewrite


def _consumer_protocol(assignor: str) -> Callable[[dict[str, Any]], None]:
    def rewrite(data: dict[str, Any]) -> None:
        for config in _consumer_configs(data):
            for key in _CLASSIC_ONLY:
                config.pop(key, None)
            config.pop("group.protocol", None)
            config.pop("group.remote.assignor", None)
        data["defaults"]["group.protocol"] = "consumer"
        data["defaults"]["group.remote.assignor"] = assignor

    return rewrite


def switch_protocol(data: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A sweep row's data after overrides that set ``group.protocol``, made valid for it.

    Kafka's client refuses the classic-only settings under ``group.protocol=consumer`` and
    ``group.remote.assignor`` under ``classic`` (ConsumerConfig.checkUnsupportedConfigs), so a
    sweep that flips the protocol of a classic base drops them, as ``groupsim compare``'s
    ``consumer`` variant does: ``defaults.group.protocol`` from the defaults and every consumer,
    ``consumers[i].config.group.protocol`` from that consumer's own config. A setting the row's
    overrides set themselves is kept (and refused by validation: an error row). ``data`` is
    changed in place and returned.
    """
    set_paths = {str(p) for p in overrides}
    for path, value in overrides.items():
        path = str(path)
        if not path.endswith("group.protocol") or not isinstance(value, str):
            continue
        prefix = path.removesuffix("group.protocol")
        drop = _CLASSIC_ONLY if value.lower() == "consumer" else ("group.remote.assignor",)
        if prefix == "defaults.":
            configs = list(_consumer_configs(data))
            prefixes = ["defaults."] + [
                f"consumers[{i}].config." for i in range(len(data.get("consumers") or ()))
            ]
        else:
            configs = _config_at(data, prefix)
            prefixes = [prefix]
        for config in configs:
            for key in drop:
                if not any(f"{pre}{key}" in set_paths for pre in prefixes):
                    config.pop(key, None)
    return data


def _config_at(data: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The config mapping a ``consumers[i].config.`` (or ``consumers.config.``) prefix names."""
    import re

    m = re.fullmatch(r"consumers(?:\[(\d+)\]|\.(\d+))?\.config\.", prefix)
    consumers = data.get("consumers") or []
    if m is None or not isinstance(consumers, list):
        return []
    index = m.group(1) or m.group(2)
    items = consumers if index is None and len(consumers) == 1 else []
    if index is not None and int(index) < len(consumers):
        items = [consumers[int(index)]]
    return [c["config"] for c in items if isinstance(c, dict) and isinstance(c.get("config"), dict)]


#: The built-in variants, in the order ``compare`` runs them by default.
VARIANTS: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "eager": ("classic, range (EAGER)", _classic("range")),
    "cooperative": ("classic, cooperative-sticky", _classic("cooperative-sticky")),
    "static": ("classic, cooperative-sticky, static members", _classic("cooperative-sticky", True)),
    "consumer": ("consumer protocol (KIP-848), uniform", _consumer_protocol("uniform")),
}
DEFAULT_VARIANTS: tuple[str, ...] = tuple(VARIANTS)


class VariantError(ValueError):
    """A variant name or override that cannot be applied."""


def parse_variant(text: str) -> tuple[str, str, Mapping[str, Any]]:
    """``eager`` (a built-in) or ``name=path:value,path:value`` (dotted-path overrides, values
    parsed as YAML scalars): (name, description, overrides)."""
    if "=" not in text:
        if text not in VARIANTS:
            raise VariantError(
                f"unknown variant {text!r}: the built-ins are {', '.join(VARIANTS)}; "
                "or name one: NAME=path:value,..."
            )
        return text, VARIANTS[text][0], {}
    name, _, spec = text.partition("=")
    if not name.strip():
        raise VariantError(f"variant {text!r} has no name (NAME=path:value,...)")
    import yaml

    overrides: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        path, sep, raw = part.partition(":")
        if not sep or not path:
            raise VariantError(f"variant {name}: {part!r} is not path:value")
        overrides[path.strip()] = yaml.safe_load(raw.strip()) if raw.strip() else None
    return name.strip(), spec, overrides


def variant_data(data: Mapping[str, Any], variant: str) -> tuple[str, dict[str, Any]]:
    """The scenario data of ``variant`` (without its expectations): (description, data)."""
    name, description, overrides = parse_variant(variant)
    out = copy.deepcopy(dict(data))
    out["expect"] = []
    if name in VARIANTS and not overrides:
        VARIANTS[name][1](out)
    else:
        try:
            out = apply_overrides(out, overrides)
        except ValueError as exc:
            raise VariantError(f"variant {name}: {exc}") from exc
    return description, out


@frozen
class Measures:
    """What one variant's run did to the partitions (the module docstring defines each)."""

    variant: str
    description: str
    partitions_moved: int
    partitions_revoked: int
    unowned_partition_ms: int
    assignments: int
    last_change_ms: int | None
    consumer_errors: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def measure(variant: str, description: str, events: Sequence[Mapping[str, Any]]) -> Measures:
    """The measures of one run's event log."""
    owner: dict[tuple[str, str], str] = {}
    moved = revoked = assignments = errors = 0
    last_change: int | None = None
    for event in events:
        name = event.get("event")
        if name == ev.REBALANCE_CALLBACK:
            parts = list(event.get("partitions") or ())
            group = str(event.get("group_id"))
            node = str(event.get("node"))
            if event.get("callback") in ("revoked", "lost"):
                revoked += len(parts)
            elif event.get("callback") == "assigned":
                for p in parts:
                    before = owner.get((group, p))
                    if before is not None and before != node:
                        moved += 1
                    owner[(group, p)] = node
            if parts:
                last_change = int(event.get("t_ms", 0))
        elif name == "assignment_received":
            assignments += 1
        elif name == "response_received" and event.get("error") not in (None, "NONE"):
            errors += 1
    unowned = sum(unowned_partition_ms(events).values())
    return Measures(variant, description, moved, revoked, unowned, assignments, last_change, errors)


#: The table's rows: (label, Measures field, format).
ROWS: tuple[tuple[str, str], ...] = (
    ("partitions moved", "partitions_moved"),
    ("partitions revoked or lost", "partitions_revoked"),
    ("unowned partition-time", "unowned_partition_ms"),
    ("assignments received", "assignments"),
    ("last change at", "last_change_ms"),
    ("error answers to consumers", "consumer_errors"),
)


def table_rows(results: Sequence[Measures]) -> list[list[str]]:
    """The side-by-side table as text cells: a header row, then one row per measure."""
    from scenarios.units import format_ms

    def cell(field: str, value: Any) -> str:
        if value is None:
            return "-"
        if field == "unowned_partition_ms":
            return f"{value / 1000:.1f} partition-s"
        if field == "last_change_ms":
            return format_ms(value)
        return str(value)

    rows = [["", *[r.variant for r in results]]]
    for label, field in ROWS:
        rows.append([label, *[cell(field, getattr(r, field)) for r in results]])
    return rows


def markdown_table(results: Sequence[Measures]) -> str:
    rows = table_rows(results)
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


def compare(
    scenario: Any, variants: Sequence[str] = DEFAULT_VARIANTS, *, seed: int | None = None
) -> list[Measures]:
    """Run ``scenario`` (a loaded ``Scenario``) once per variant with the same seed."""
    from scenarios.loader import load_scenario_dict
    from scenarios.runner import run_scenario

    out = []
    for variant in variants:
        description, data = variant_data(scenario.data, variant)
        name = parse_variant(variant)[0]
        loaded = load_scenario_dict(data, source=f"{scenario.source} [{name}]", allow_code=True)
        result = run_scenario(loaded, seed=seed)
        if result.error is not None:
            raise VariantError(f"variant {name}: the run failed: {result.error}")
        out.append(measure(name, description, result.events))
    return out
