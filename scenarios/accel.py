"""Which build runs: pure Python (the default) or the optional mypyc-compiled build.

``make accel`` compiles the modules below with mypyc, in place (``*.so`` files beside the
sources, git-ignored); Python then imports the compiled module instead of the ``.py``.
``make clean`` (or ``python scripts/accel.py clean``) removes them, and the pure build runs again.
The compiled build runs the same source, so every event log is byte-identical
(``make accel-check``); docs/runner.md has the measurements.

Modules left out run interpreted in either build: those holding only attrs values (attrs writes
their methods at runtime, so compiling them gains nothing), those whose attrs classes mypyc
cannot build (``field(...)`` defaults, ``object`` or ``ClassVar`` annotations: mypyc rewrites a
class body's annotations, and attrs then sees the wrong fields; ``coordinator.protocol``,
``coordinator.group``, the two ``timers`` modules), structlog's logger subclass
(``scenarios.eventlog``), and the parts off the hot path. Within the compiled build the compiled
modules import each other directly, so the set is built and removed as a whole.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

COMPILED_MODULES: tuple[str, ...] = (
    "coordinator.cluster",
    "coordinator.errors",
    "coordinator.events",
    "coordinator.group_metadata_manager",
    "coordinator.java",
    "coordinator.kafka_apis",
    "coordinator.kafka_uuid",
    "coordinator.loading",
    "coordinator.offset_metadata_manager",
    "coordinator.placement",
    "coordinator.result",
    "coordinator.runtime",
    "coordinator.service",
    "coordinator.shard",
    "coordinator.state_machine",
    "coordinator.timeline_order",
    "coordinator.topics",
    "coordinator.topology",
    "coordinator.validation",
    "members.application",
    "members.assignor_support",
    "members.backoff",
    "members.classic_membership",
    "members.consumer",
    "members.consumer_protocol",
    "members.coordinator_lookup",
    "members.failure",
    "members.heartbeat",
    "members.membership",
    "members.metadata",
    "members.network",
    "members.offsets",
    "members.positions",
    "members.rebalance",
    "members.state",
    "scenarios.engine",
    "scenarios.simulation",
)
"""The hot modules of the rolling restart (cProfile, docs/runner.md): the coordinator's request
path, the consumer and its parts, the engine and the runner."""

_EXTENSIONS = tuple(importlib.machinery.EXTENSION_SUFFIXES)


def _locations(name: str) -> list[Path]:
    """The directories where module ``name`` would be found, without importing its package."""
    package, _, _ = name.rpartition(".")
    spec = importlib.util.find_spec(package)  # a top-level package: found, not imported
    if spec is None or spec.submodule_search_locations is None:
        return []
    return [Path(entry) for entry in spec.submodule_search_locations]


def _extension_file(name: str) -> Path | None:
    leaf = name.rpartition(".")[2]
    for directory in _locations(name):
        for suffix in _EXTENSIONS:
            candidate = directory / (leaf + suffix)
            if candidate.is_file():
                return candidate
    return None


def compiled_modules() -> list[str]:
    """The modules of ``COMPILED_MODULES`` that a compiled extension file stands beside (Python
    imports it instead of the source)."""
    return [name for name in COMPILED_MODULES if _extension_file(name) is not None]


def build_kind() -> str:
    """``"pure"``, ``"compiled"``, or ``"partly compiled (n of m modules)"`` (a stale build)."""
    n = len(compiled_modules())
    if n == 0:
        return "pure"
    if n == len(COMPILED_MODULES):
        return "compiled"
    return f"partly compiled ({n} of {len(COMPILED_MODULES)} modules)"


def running_kind() -> str:
    """What this process runs: ``"compiled"`` when the imported modules of ``COMPILED_MODULES``
    came from compiled files, ``"pure"`` when from sources (``force_pure``, or no build)."""
    files = [
        getattr(sys.modules[name], "__file__", None) or ""
        for name in COMPILED_MODULES
        if name in sys.modules
    ]
    compiled = sum(f.endswith(_EXTENSIONS) for f in files)
    if compiled == 0:
        return "pure"
    return "compiled" if compiled == len(files) else f"mixed ({compiled} of {len(files)})"


def stale_modules() -> list[str]:
    """Compiled modules whose ``.py`` source changed after the build (``make accel`` again):
    Python would run the old compiled code."""
    stale = []
    for name in COMPILED_MODULES:
        extension = _extension_file(name)
        if extension is None:
            continue
        source = extension.parent / (name.rpartition(".")[2] + ".py")
        if source.exists() and source.stat().st_mtime > extension.stat().st_mtime:
            stale.append(name)
    return stale


def describe() -> str:
    """One line for ``groupsim --version`` and the benchmarks: the build, and a stale warning."""
    kind = build_kind()
    stale = stale_modules() if kind != "pure" else []
    if stale:
        kind += f"; STALE: {len(stale)} module(s) changed since the build, run make accel again"
    return kind


class _PureFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of ``COMPILED_MODULES`` as their ``.py`` sources, never a compiled file."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in COMPILED_MODULES or path is None:
            return None
        leaf = fullname.rpartition(".")[2] + ".py"
        for entry in path:
            source = Path(entry) / leaf
            if source.is_file():
                return importlib.util.spec_from_file_location(fullname, source)
        return None


def force_pure() -> None:
    """Import the pure-Python modules even when a compiled build is present (the benchmarks'
    and tests' same-run comparisons). Call it before anything imports ``coordinator``,
    ``members`` or ``scenarios.simulation`` (``python -c "from scenarios.accel import
    force_pure; force_pure(); ..."``, as ``bench.simulation --compare-accel`` does)."""
    loaded = [name for name in COMPILED_MODULES if name in sys.modules]
    if loaded:
        raise RuntimeError(f"force_pure() after {loaded[0]} was imported")
    if not any(isinstance(finder, _PureFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _PureFinder())
