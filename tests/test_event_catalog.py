"""docs/events.md, the event catalog (coordinator.events) and the events runs really emit agree."""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from coordinator import events
from coordinator.events import CATALOG, COMMON_FIELDS
from scenarios.loader import library_scenarios, load_scenario
from scenarios.runner import run_scenario

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "events.md"
NAME = re.compile(r"`([a-z_]+)`")


def documented_rows() -> dict[str, list[set[str]]]:
    """event name -> the backticked words of the fields column of each table row naming it."""
    rows: dict[str, list[set[str]]] = {}
    in_events_table = False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            in_events_table = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "event":  # the header of a table of events (not of fields)
            in_events_table = True
            continue
        if in_events_table and cells[0].startswith("`"):
            for name in NAME.findall(cells[0]):
                rows.setdefault(name, []).append(set(NAME.findall(cells[1])))
    return rows


def test_every_documented_event_is_catalogued_and_every_catalogued_event_documented():
    documented = set(documented_rows())
    assert len(documented) > 80, "the tables of docs/events.md were found"
    assert sorted(documented - CATALOG.keys()) == [], "documented but not in coordinator.events"
    assert sorted(CATALOG.keys() - documented) == [], "in coordinator.events but not documented"


def test_the_docs_name_every_catalogued_field():
    # group_id is on every consumer event (docs: "Every consumer event has ... group_id")
    missing = {
        name: sorted(
            f
            for f in spec.fields
            if f != "group_id" and not any(f in row for row in documented_rows()[name])
        )
        for name, spec in CATALOG.items()
    }
    assert {n: m for n, m in missing.items() if m} == {}


def test_each_constant_is_its_catalogued_name():
    constants = {
        value for key, value in vars(events).items() if key.isupper() and isinstance(value, str)
    }
    assert CATALOG.keys() <= constants
    assert all(getattr(events, name.upper()) == name for name in CATALOG)


def _digest_workloads() -> Any:
    spec = importlib.util.spec_from_file_location(
        "log_digests", ROOT / "scripts" / "log_digests.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def emitted() -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every event of every library lesson and of the noisy log-digest workloads."""
    for path in library_scenarios():
        for e in run_scenario(load_scenario(path)).events:
            yield f"lesson/{path.stem}", e
    digests = _digest_workloads()
    for seed in range(1, 7):
        for protocol in ("eager", "cooperative"):
            for static in (False, True):
                for e in digests.noisy(seed, protocol, static).events:
                    yield f"noisy/{seed}/{protocol}/{static}", e


@pytest.mark.xdist_group("event-catalog")
def test_every_emitted_event_is_catalogued_with_only_catalogued_fields():
    unknown: dict[str, str] = {}
    extra: dict[str, set[str]] = {}
    seen: set[str] = set()
    for run, e in emitted():
        name = str(e["event"])
        seen.add(name)
        spec = CATALOG.get(name)
        if spec is None:
            unknown.setdefault(name, run)
            continue
        assert set(COMMON_FIELDS) - {"node"} <= e.keys() or name.startswith("sticky_"), (run, e)
        bad = {k for k in e if not spec.allows(k)}
        if bad:
            extra.setdefault(name, set()).update(bad)
    assert unknown == {}, "events no catalog entry describes (first run that emitted each)"
    assert extra == {}, "fields the catalog does not list"
    assert len(seen) > 50, "the workloads exercise most of the catalog"


def test_the_timeline_names_only_catalogued_events():
    from scenarios import report

    named = {*report.ACTION_EVENTS, *report.TEACHING_EVENTS, *report.RETRIED_EVENTS}
    assert sorted(named - CATALOG.keys()) == []


EMITTERS = {"event", "_emit"}  # ConsumerStep/Step.event, the consumer's and simulation's _emit


def named_emissions() -> Iterator[tuple[str, str]]:
    """(where, event name) of every emitter call in the packages whose name is written out: a
    string literal or a constant of coordinator.events (a forwarded variable is skipped)."""
    constants = {k: v for k, v in vars(events).items() if k.isupper() and isinstance(v, str)}
    for package in ("coordinator", "assignors", "members", "scenarios", "pipeline"):
        for path in sorted((ROOT / package).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            if "event(" not in source and "_emit(" not in source:
                continue
            for node in ast.walk(ast.parse(source)):
                if not (isinstance(node, ast.Call) and node.args):
                    continue
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called not in EMITTERS:
                    continue
                arg = node.args[0]
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    yield where, arg.value
                elif isinstance(arg, ast.Name | ast.Attribute):
                    name = arg.id if isinstance(arg, ast.Name) else arg.attr
                    if name in constants:
                        yield where, constants[name]


def spelled_out_emissions() -> Iterator[tuple[str, str, list[str]]]:
    """(where, event name, field names) of every event a hot path appends as a literal,
    ``<step>.events.append(("name", {"field": ...}))``, instead of calling ``event``."""
    for package in ("coordinator", "assignors", "members", "scenarios", "pipeline"):
        for path in sorted((ROOT / package).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            if "events.append(" not in source:
                continue
            for node in ast.walk(ast.parse(source)):
                if not (isinstance(node, ast.Call) and len(node.args) == 1):
                    continue
                func = node.func
                if not (
                    isinstance(func, ast.Attribute)
                    and func.attr == "append"
                    and isinstance(func.value, ast.Attribute)
                    and func.value.attr == "events"
                ):
                    continue
                arg = node.args[0]
                if not (
                    isinstance(arg, ast.Tuple)
                    and len(arg.elts) == 2
                    and isinstance(arg.elts[0], ast.Constant)
                    and isinstance(arg.elts[1], ast.Dict)
                ):
                    continue  # a forwarded (name, fields) pair: Step.event's own append
                keys = [k.value for k in arg.elts[1].keys if isinstance(k, ast.Constant)]
                yield f"{path.relative_to(ROOT)}:{node.lineno}", str(arg.elts[0].value), keys


def test_every_spelled_out_event_is_catalogued_with_only_catalogued_fields():
    """The hot paths' literal events (no ``event`` call) are held to the catalog too."""
    found = list(spelled_out_emissions())
    assert [(where, name) for where, name, _ in found if name not in CATALOG] == []
    bad = [
        (where, name, k)
        for where, name, keys in found
        if name in CATALOG
        for k in keys
        if not CATALOG[name].allows(k)
    ]
    assert bad == []
    assert len(found) >= 6, "the spelled-out events were found"


def test_every_event_the_source_names_is_catalogued():
    """Statically, so an event on a path no lesson or noisy run takes is checked too."""
    named = list(named_emissions())
    assert [(where, name) for where, name in named if name not in CATALOG] == []
    assert len(named) > 100, "the emitter calls were found"
