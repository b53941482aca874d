"""YAML parsing that remembers where every value came from.

PyYAML's ``compose`` gives a node tree whose nodes carry ``start_mark`` (0-based line and column).
We turn it into plain Python data (dicts, lists, scalars) plus a ``Positions`` table mapping each
field path to the 1-based line/column of its value and of its key. Validators then work on plain
data and ask ``Positions`` where a path lives; data built in code (a sweep's overrides) simply has
no positions, and errors fall back to naming the source and the path.

Reusable by any YAML input of the project (the pipeline's sweep files use it too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml
from attrs import define, field

from scenarios.errors import Issue, ScenarioError

PathT = tuple[str | int, ...]


def path_str(path: Sequence[str | int]) -> str:
    """``("timeline", 2, "crash")`` -> ``timeline[2].crash``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


@define
class Positions:
    """Where each path's value (and key) starts in the source text."""

    source: str
    values: dict[PathT, tuple[int, int]] = field(factory=dict)
    keys: dict[PathT, tuple[int, int]] = field(factory=dict)

    def of(self, path: Sequence[str | int], *, key: bool = False) -> tuple[int | None, int | None]:
        """The best known position of ``path``: its key (if asked), else its value, else a parent's."""
        p = tuple(path)
        while True:
            if key and p in self.keys:
                return self.keys[p]
            if p in self.values:
                return self.values[p]
            if not p:
                return (None, None)
            p = p[:-1]

    def issue(
        self,
        path: Sequence[str | int],
        message: str,
        *,
        hint: str | None = None,
        key: bool = False,
    ) -> Issue:
        line, column = self.of(path, key=key)
        return Issue(
            source=self.source,
            path=path_str(path),
            message=message,
            line=line,
            column=column,
            hint=hint,
        )


_constructor = yaml.SafeLoader("")  # only its scalar construction is used


def _mark(node: yaml.Node) -> tuple[int, int]:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def parse_yaml(text: str, source: str) -> tuple[Any, Positions]:
    """Parse one YAML document into plain data and its positions; syntax errors become issues."""
    positions = Positions(source)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        problem = exc.problem or "invalid YAML"
        if exc.context:
            cm = exc.context_mark
            started = f" (started at line {cm.line + 1}, column {cm.column + 1})" if cm else ""
            problem = f"{exc.context}{started}: {problem}"
        raise ScenarioError(
            [Issue(source, "", f"YAML syntax error: {problem}", line, col)]
        ) from None
    except yaml.YAMLError as exc:
        raise ScenarioError([Issue(source, "", f"YAML error: {exc}")]) from None
    if node is None:
        return None, positions
    issues: list[Issue] = []
    data = _convert(node, (), positions, issues)
    if issues:
        raise ScenarioError(issues)
    return data, positions


def _convert(node: yaml.Node, path: PathT, pos: Positions, issues: list[Issue]) -> Any:
    pos.values[path] = _mark(node)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        _constructor.flatten_mapping(node)  # resolves YAML merge keys (<<)
        for key_node, value_node in node.value:
            key = _convert(key_node, (*path, "<key>"), pos, issues)
            pos.values.pop((*path, "<key>"), None)
            if isinstance(key, (dict, list)):
                line, col = _mark(key_node)
                issues.append(
                    Issue(pos.source, path_str(path), "a mapping key must be a scalar", line, col)
                )
                continue
            if not isinstance(key, str):
                key = str(key).lower() if isinstance(key, bool) else str(key)
            child = (*path, key)
            if key in out:
                line, col = _mark(key_node)
                first = pos.keys.get(child, (None, None))[0]
                issues.append(
                    Issue(
                        pos.source,
                        path_str(child),
                        f"duplicate key {key!r}",
                        line,
                        col,
                        hint=f"first given at line {first}" if first else None,
                    )
                )
                continue
            pos.keys[child] = _mark(key_node)
            out[key] = _convert(value_node, child, pos, issues)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, (*path, i), pos, issues) for i, item in enumerate(node.value)]
    try:
        return _constructor.construct_object(node, deep=True)
    except yaml.constructor.ConstructorError as exc:
        line, col = _mark(node)
        issues.append(
            Issue(pos.source, path_str(path), f"bad YAML value: {exc.problem}", line, col)
        )
        return None
