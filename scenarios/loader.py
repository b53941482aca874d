"""Load a scenario from a file, a YAML text, a library name, or a dict (for sweeps).

``load_scenario`` and ``load_scenario_dict`` raise ``ScenarioError`` carrying every problem, each
with file:line:column and the field path; they never let a parser or validator exception through.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from scenarios.errors import Issue, ScenarioError
from scenarios.model import Scenario
from scenarios.overrides import apply_overrides
from scenarios.validate import Validator
from scenarios.yamlpos import MAX_YAML_CHARS, Positions, decode_utf8, parse_yaml

__all__ = [
    "ScenarioError",
    "library_path",
    "library_scenarios",
    "load_scenario",
    "load_scenario_dict",
]


def library_path() -> Path:
    """The directory of the built-in lessons (``scenarios/library``)."""
    return Path(str(resources.files("scenarios") / "library"))


def library_scenarios() -> list[Path]:
    return sorted(library_path().glob("*.yaml"))


def _resolve(path_or_text: str | os.PathLike[str]) -> tuple[str, str, str | None]:
    """-> (text, source label, default name). A str with a newline is YAML text itself."""
    if isinstance(path_or_text, str) and (
        "\n" in path_or_text or path_or_text.lstrip().startswith("version:")
    ):
        return path_or_text, "<text>", None
    path = Path(path_or_text)
    if not path.exists() and isinstance(path_or_text, str) and not path.suffix:
        lesson = library_path() / f"{path_or_text}.yaml"
        if lesson.exists():
            path = lesson
    text = read_yaml_file(path, str(path_or_text))
    return text, _display(path), path.stem


def read_yaml_file(path: Path, label: str) -> str:
    """A YAML file's text, refused (as a ``ScenarioError``) when missing, too large or not UTF-8.

    The size is checked before reading, so a huge file costs nothing (``MAX_YAML_CHARS``).
    """
    try:
        size = path.stat().st_size
        if size > MAX_YAML_CHARS * 4:  # even 4-byte UTF-8 characters cannot fit the limit
            raise ScenarioError(
                [
                    Issue(
                        label,
                        "",
                        f"file too large: {size:,} bytes, the limit is {MAX_YAML_CHARS:,} characters",
                        hint="see docs/scenarios.md, 'Limits'",
                    )
                ]
            )
        with path.open("rb") as f:
            data = f.read(MAX_YAML_CHARS * 4 + 1)
    except FileNotFoundError:
        raise ScenarioError(
            [Issue(label, "", "no such file (nor a library lesson of that name)")]
        ) from None
    except IsADirectoryError:
        raise ScenarioError([Issue(label, "", "is a directory, not a scenario file")]) from None
    except OSError as exc:
        raise ScenarioError([Issue(label, "", f"cannot read: {exc.strerror or exc}")]) from None
    return decode_utf8(data, _display(path))


def _display(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def load_scenario(
    path_or_text: str | os.PathLike[str],
    *,
    name: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    allow_code: bool = False,
) -> Scenario:
    """Parse and validate a scenario; ``name`` is used when the file has no ``name:``.

    ``path_or_text`` is a path, a library lesson name (``range-three-threads``), or YAML text.
    ``overrides`` (dotted paths, see ``scenarios.overrides``) are applied before validation.
    ``allow_code`` lets the file name assignors as ``module:Class`` (importing that module, now):
    off by default, because a scenario file is data that may come from anyone (README, "Trust").
    """
    text, source, default_name = _resolve(path_or_text)
    data, positions = parse_yaml(text, source)
    if data is None:
        empty = "empty" if not text.strip() else "holds no value (only comments, or null)"
        raise ScenarioError(
            [
                Issue(
                    source,
                    "",
                    f"the file {empty}" if empty[0] == "h" else "the file is empty",
                    1,
                    1,
                    hint="a scenario starts with 'version: 1'; see docs/scenarios.md",
                )
            ]
        )
    if overrides:
        data = _override(data, overrides, source)
        positions = Positions(f"{source} (overridden)") if data is not None else positions
    return _build(data, positions, name or default_name, allow_code)


def load_scenario_dict(
    data: Mapping[str, Any],
    source: str = "<dict>",
    *,
    name: str | None = None,
    allow_code: bool = False,
) -> Scenario:
    """Validate a scenario given as plain data (errors name ``source`` and the field path)."""
    return _build(_string_keys(data), Positions(source), name, allow_code)


def with_overrides(scenario: Scenario, overrides: Mapping[str, Any]) -> Scenario:
    """A variant of ``scenario`` with dotted-path overrides (see ``scenarios.overrides``)."""
    data = apply_overrides(scenario.data, overrides)
    # the scenario was validated already (module:Class names only if allowed then), and the
    # overrides come from the calling Python code: both are trusted
    return load_scenario_dict(data, source=f"{scenario.source} (overridden)", allow_code=True)


def _string_keys(value: Any) -> Any:
    """Mapping keys as YAML files have them (strings), whatever the caller built."""
    if isinstance(value, Mapping):
        return {
            (str(k).lower() if isinstance(k, bool) else str(k)): _string_keys(v)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_string_keys(v) for v in value]
    return value


def _override(data: Any, overrides: Mapping[str, Any], source: str) -> Any:
    if not isinstance(data, dict):
        return data
    try:
        return apply_overrides(data, overrides)
    except ValueError as exc:
        raise ScenarioError([Issue(source, "", str(exc))]) from None


def _build(data: Any, positions: Positions, name: str | None, allow_code: bool) -> Scenario:
    validator = Validator(data, positions, name=name, allow_code=allow_code)
    try:
        scenario = validator.build()
    except ScenarioError:
        raise
    except Exception as exc:  # a validator bug must still not reach the user as a traceback
        validator.issues.append(Issue(positions.source, "", f"internal validation error: {exc!r}"))
        scenario = None
    if validator.issues or scenario is None:
        raise ScenarioError(validator.issues or [Issue(positions.source, "", "invalid scenario")])
    return scenario
