"""Sweep files: a base scenario, a grid of overrides, named variants and seeds -> scenario rows.

A sweep file is YAML, validated like a scenario (every problem at once, each at file:line:column)::

    sweep: rolling-restart-cost          # a name for the report
    description: what question it answers
    base: rolling-restart.yaml           # a file (relative to this one) or a library lesson name
    seeds: 3                             # a count (seed, seed+1, ...) or a list of seeds
    seed: 0                              # first seed when seeds is a count (default 0)
    until: 120s                          # optional: stop every run here (default: the scenario's)
    variants:                            # optional named override sets, each crossed with the grid
      eager: {defaults.partition.assignment.strategy: [range]}
      cooperative: {defaults.partition.assignment.strategy: [cooperative-sticky]}
    grid:                                # dotted scenario paths -> the values to try
      consumers.count: [3, 6, 9]

Expansion is deterministic and independent of how Spark partitions the rows: variants in file
order, then the grid's cartesian product in file order (the last key varies fastest), then seeds;
``scenario_id`` numbers the rows in that order. A row's seed is the listed seed itself, so a rerun
with the same file gives the same rows.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from scenarios.errors import Issue
from scenarios.units import parse_duration_ms
from scenarios.yamlpos import Positions, parse_yaml

TOP_KEYS = ("sweep", "description", "base", "seeds", "seed", "until", "variants", "grid")
MAX_ROWS = 1_000_000
BASE_VARIANT = "base"


class SweepError(Exception):
    """A sweep file is invalid; ``issues`` lists every problem, in file order."""

    def __init__(self, issues: Sequence[Issue]):
        self.issues = sorted(issues, key=lambda i: (i.source, i.line or 0, i.column or 0, i.path))
        super().__init__(self.format())

    def format(self) -> str:
        n = len(self.issues)
        return "\n".join(
            [
                f"{n} error{'s' if n != 1 else ''} in sweep",
                *(f"  {i.format()}" for i in self.issues),
            ]
        )


@attrs.frozen
class SweepRow:
    """One scenario run of a sweep: which variant and grid point, which seed, what overrides."""

    scenario_id: int
    point: int  # index of the (variant, grid point) pair, shared by its seeds
    variant: str
    seed: int
    params: Mapping[str, str]  # grid path -> its value as JSON (stable across types)
    overrides: str  # every override applied (variant then grid), as JSON with sorted keys

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenario_id": self.scenario_id,
            "point": self.point,
            "variant": self.variant,
            "seed": self.seed,
            "params": dict(self.params),
            "overrides": self.overrides,
        }


@attrs.frozen
class Sweep:
    name: str
    description: str
    base: str  # the base as written in the file
    base_source: str  # where the base scenario was read from
    base_text: str  # the base scenario's YAML text (shipped to executors with the rows)
    seeds: tuple[int, ...]
    until_ms: int | None
    variants: tuple[tuple[str, Mapping[str, Any]], ...]
    grid: tuple[tuple[str, tuple[Any, ...]], ...]
    source: str = "<sweep>"
    allow_code: bool = False  # may the base and the variants name module:Class assignors?

    @property
    def size(self) -> int:
        n = max(1, len(self.variants)) * len(self.seeds)
        for _, values in self.grid:
            n *= len(values)
        return n

    def rows(self) -> list[SweepRow]:
        """Every scenario row, in the documented deterministic order."""
        variants = list(self.variants) or [(BASE_VARIANT, {})]
        keys = [k for k, _ in self.grid]
        out: list[SweepRow] = []
        point = 0
        for variant, fixed in variants:
            for combo in itertools.product(*(values for _, values in self.grid)):
                chosen = dict(zip(keys, combo, strict=True))
                merged = {**fixed, **chosen}
                params = {k: _json(v) for k, v in chosen.items()}
                overrides = _json(merged)
                for seed in self.seeds:
                    out.append(SweepRow(len(out), point, variant, seed, params, overrides))
                point += 1
        return out


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def load_sweep(path: str | Path, *, allow_code: bool = False) -> Sweep:
    """Read and validate a sweep file; raises ``SweepError`` with every problem located.

    ``allow_code`` (``groupsim sweep --allow-code``) is the scenarios' trust model (README,
    "Trust"): without it neither the base scenario nor any variant or grid value may name a
    ``module:Class`` assignor; with it those modules are imported here, so a missing one is an
    error at its line before Spark starts.
    """
    from scenarios.errors import ScenarioError
    from scenarios.loader import read_yaml_file

    p = Path(path)
    if not p.exists():
        raise SweepError([Issue(str(path), "", "no such sweep file")])
    try:
        text = read_yaml_file(p, str(path))  # size-checked and UTF-8 checked, errors located
    except ScenarioError as exc:
        raise SweepError(exc.issues) from None
    return parse_sweep(text, source=str(path), base_dir=p.parent, allow_code=allow_code)


def parse_sweep(
    text: str, *, source: str = "<sweep>", base_dir: str | Path = ".", allow_code: bool = False
) -> Sweep:
    from scenarios.errors import ScenarioError

    try:
        data, pos = parse_yaml(text, source)
    except ScenarioError as exc:
        raise SweepError(exc.issues) from None
    issues: list[Issue] = []
    if not isinstance(data, dict):
        raise SweepError(
            [pos.issue((), "a sweep file must be a mapping (sweep:, base:, grid:, ...)")]
        )
    for key in data:
        if key not in TOP_KEYS:
            issues.append(
                pos.issue(
                    (key,), f"unknown key {key!r}", hint=_did_you_mean(key, TOP_KEYS), key=True
                )
            )
    name = _string(data, "sweep", pos, issues, default=Path(source).stem)
    description = _string(data, "description", pos, issues, default="")
    base, base_source, base_text = _base(data, pos, issues, Path(base_dir), allow_code)
    seeds = _seeds(data, pos, issues)
    until_ms = None
    if data.get("until") is not None:
        try:
            until_ms = parse_duration_ms(data["until"])
        except ValueError as exc:
            issues.append(pos.issue(("until",), str(exc)))
    variants = _variants(data, pos, issues)
    grid = _grid(data, pos, issues)
    _check_code(variants, grid, pos, issues, allow_code)
    if not issues:
        sweep = Sweep(
            name,
            description,
            base,
            base_source,
            base_text,
            seeds,
            until_ms,
            variants,
            grid,
            source,
            allow_code,
        )
        if sweep.size > MAX_ROWS:
            issues.append(
                pos.issue((), f"the sweep expands to {sweep.size:,} rows (limit {MAX_ROWS:,})")
            )
        else:
            return sweep
    raise SweepError(issues)


def _did_you_mean(word: str, choices: Sequence[str]) -> str | None:
    import difflib

    close = difflib.get_close_matches(word, choices, n=1)
    return f"did you mean {close[0]!r}?" if close else f"expected one of {', '.join(choices)}"


def _string(
    data: dict[str, Any], key: str, pos: Positions, issues: list[Issue], default: str
) -> str:
    value = data.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        issues.append(pos.issue((key,), f"{key} must be a string, got {type(value).__name__}"))
        return default
    return value


def _base(
    data: dict[str, Any], pos: Positions, issues: list[Issue], base_dir: Path, allow_code: bool
) -> tuple[str, str, str]:
    base = data.get("base")
    if not isinstance(base, str) or not base.strip():
        issues.append(
            pos.issue(("base",), "base must name a scenario file or a library lesson", key=True)
        )
        return "", "", ""
    from scenarios.errors import ScenarioError
    from scenarios.loader import library_path, load_scenario, read_yaml_file

    candidates = [base_dir / base, Path(base)]
    if not Path(base).suffix:
        candidates.append(library_path() / f"{base}.yaml")
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        issues.append(
            pos.issue(
                ("base",),
                f"no scenario file {base!r} (relative to the sweep file) "
                "and no library lesson of that name",
            )
        )
        return base, "", ""
    try:
        load_scenario(str(found), allow_code=allow_code)
        text = read_yaml_file(found, str(found))
    except ScenarioError as exc:
        n = len(exc.issues)
        issues.append(pos.issue(("base",), f"the base scenario is invalid ({n} error(s) listed)"))
        issues.extend(exc.issues)
        text = ""
    return base, str(found), text


# the runs table stores seeds as BIGINT (signed 64-bit); a scenario's own `seed` is 0 or more
SEED_MIN, SEED_MAX = 0, 2**63 - 1


def _seeds(data: dict[str, Any], pos: Positions, issues: list[Issue]) -> tuple[int, ...]:
    first = data.get("seed", 0)
    if isinstance(first, bool) or not isinstance(first, int):
        issues.append(pos.issue(("seed",), "seed must be an integer"))
        first = 0
    elif not SEED_MIN <= first <= SEED_MAX:
        issues.append(pos.issue(("seed",), _seed_range_message(first)))
        first = 0
    seeds = data.get("seeds", 1)
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        if seeds < 1 or seeds > MAX_ROWS:
            issues.append(
                pos.issue(("seeds",), f"seeds must be between 1 and {MAX_ROWS:,}, got {seeds}")
            )
            return (0,)
        if first + seeds - 1 > SEED_MAX:
            issues.append(pos.issue(("seeds",), _seed_range_message(first + seeds - 1)))
            return (0,)
        return tuple(range(first, first + seeds))
    if isinstance(seeds, list) and seeds:
        bad = [s for s in seeds if isinstance(s, bool) or not isinstance(s, int)]
        if bad:
            issues.append(pos.issue(("seeds",), f"every seed must be an integer, got {bad[0]!r}"))
            return (0,)
        for i, s in enumerate(seeds):
            if not SEED_MIN <= s <= SEED_MAX:
                issues.append(pos.issue(("seeds", i), _seed_range_message(s)))
                return (0,)
        if len(set(seeds)) != len(seeds):
            issues.append(pos.issue(("seeds",), "seeds must not repeat"))
        return tuple(seeds)
    issues.append(pos.issue(("seeds",), "seeds must be a count (3) or a list of seeds ([1, 7])"))
    return (0,)


def _seed_range_message(seed: int) -> str:
    shown = str(seed) if len(str(seed)) <= 30 else f"{str(seed)[:20]}... ({len(str(seed))} digits)"
    return (
        f"seed {shown} is out of range: seeds are 0 to 2^63-1 (0 or more, as in a scenario; "
        "at most the runs table's signed 64-bit seed column)"
    )


def _variants(
    data: dict[str, Any], pos: Positions, issues: list[Issue]
) -> tuple[tuple[str, Mapping[str, Any]], ...]:
    raw = data.get("variants")
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not raw:
        issues.append(pos.issue(("variants",), "variants must map names to override mappings"))
        return ()
    out = []
    for name, overrides in raw.items():
        if overrides is None:
            overrides = {}
        if not isinstance(overrides, dict):
            issues.append(
                pos.issue(("variants", name), "a variant is a mapping of dotted paths to values")
            )
            continue
        out.append((name, overrides))
    return tuple(out)


def _grid(
    data: dict[str, Any], pos: Positions, issues: list[Issue]
) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    raw = data.get("grid")
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        issues.append(
            pos.issue(("grid",), "grid must map dotted scenario paths to lists of values")
        )
        return ()
    out = []
    for path, values in raw.items():
        if not isinstance(values, list) or not values:
            issues.append(
                pos.issue(("grid", path), f"grid.{path} must be a non-empty list of values to try")
            )
            continue
        if any(not seg for seg in path.replace("[", ".").split(".")):
            issues.append(pos.issue(("grid", path), f"bad dotted path {path!r}", key=True))
            continue
        out.append((path, tuple(values)))
    return tuple(out)


STRATEGY_KEY = "partition.assignment.strategy"


def _check_code(
    variants: tuple[tuple[str, Mapping[str, Any]], ...],
    grid: tuple[tuple[str, tuple[Any, ...]], ...],
    pos: Positions,
    issues: list[Issue],
    allow_code: bool,
) -> None:
    """Every assignor name a variant or a grid value sets, checked as a scenario's would be.

    A variant is part of the file a user received, so a ``module:Class`` in it needs
    ``allow_code`` like one in the base scenario; reported at the variant's own line.
    """
    from scenarios.validate import custom_assignor_problem

    found: list[tuple[str, tuple[Any, ...]]] = []
    for name, overrides in variants:
        for path, value in overrides.items():
            _assignor_names(str(path), value, ("variants", name, path), found)
    for path, values in grid:
        for i, value in enumerate(values):
            _assignor_names(path, value, ("grid", path, i), found)
    for assignor, where in found:
        problem = custom_assignor_problem(assignor, allow_code)
        if problem:
            issues.append(pos.issue(where, problem[0], hint=problem[1]))


def _assignor_names(
    path: str, value: Any, where: tuple[Any, ...], out: list[tuple[str, tuple[Any, ...]]]
) -> None:
    """(name, position path) of each assignor name in an override value set at dotted ``path``."""
    if path.endswith(STRATEGY_KEY):
        if isinstance(value, str):
            out.extend((v.strip(), where) for v in value.split(",") if v.strip())
        elif isinstance(value, list):
            out.extend((v, (*where, i)) for i, v in enumerate(value) if isinstance(v, str))
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _assignor_names(f"{path}.{key}", item, (*where, key), out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _assignor_names(f"{path}[{i}]", item, (*where, i), out)
