"""YAML parsing that remembers where every value came from.

PyYAML's ``compose`` gives a node tree whose nodes carry ``start_mark`` (0-based line and column).
We turn it into plain Python data (dicts, lists, scalars) plus a ``Positions`` table mapping each
field path to the 1-based line/column of its value and of its key. Validators then work on plain
data and ask ``Positions`` where a path lives; data built in code (a sweep's overrides) simply has
no positions, and errors fall back to naming the source and the path.

Reusable by any YAML input of the project (the pipeline's sweep files use it too).

Input is untrusted (lessons and sweeps are shared), so parsing is bounded: a document is refused
past ``MAX_YAML_CHARS`` characters, ``MAX_DEPTH`` levels of nesting or ``MAX_NODES`` values once
aliases are expanded (a "billion laughs" file of nested anchors is a few hundred bytes), each with
a located error instead of minutes of work, gigabytes of memory or a ``RecursionError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml
from attrs import define, field

from scenarios.errors import Issue, ScenarioError

PathT = tuple[str | int, ...]

MAX_YAML_CHARS = 2 * 1024 * 1024  # a 2,000-member scenario is ~100 KB; docs/scenarios.md
MAX_DEPTH = 64  # nesting levels (scenarios use fewer than 10)
MAX_NODES = 200_000  # values after alias expansion


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


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader whose (recursive) composer refuses nesting past ``MAX_DEPTH``."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(
                    None, None, f"nesting deeper than {MAX_DEPTH} levels", mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _TooBig(Exception):
    """Raised inside ``_convert`` when expansion passes a bound; carries the issue."""

    def __init__(self, issue: Issue):
        self.issue = issue


def _line_col(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of character ``index`` in ``text``."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def decode_utf8(data: bytes, source: str) -> str:
    """Bytes of a YAML file -> text; a non-UTF-8 file is an issue at the first bad byte's line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        byte = data[exc.start : exc.start + 1].hex()
        raise ScenarioError(
            [
                Issue(
                    source,
                    "",
                    f"not UTF-8 text: byte 0x{byte} cannot be decoded",
                    line,
                    col,
                    hint="save the file as UTF-8; a binary file is not a scenario",
                )
            ]
        ) from None


def _mark(node: yaml.Node) -> tuple[int, int]:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def parse_yaml(text: str, source: str) -> tuple[Any, Positions]:
    """Parse one YAML document into plain data and its positions; syntax errors become issues."""
    positions = Positions(source)
    if len(text) > MAX_YAML_CHARS:
        raise ScenarioError(
            [
                Issue(
                    source,
                    "",
                    f"file too large: {len(text):,} characters, the limit is {MAX_YAML_CHARS:,}",
                    hint="see docs/scenarios.md, 'Limits'",
                )
            ]
        )
    try:
        node = yaml.compose(text, Loader=_BoundedLoader)
    except yaml.reader.ReaderError as exc:
        at_line, at_col = _line_col(text, exc.position)
        what = "NUL" if exc.character == 0 else f"#x{exc.character:04x}"
        raise ScenarioError(
            [Issue(source, "", f"unacceptable character {what} in YAML text", at_line, at_col)]
        ) from None
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
    try:
        data = _convert(node, (), positions, issues, [0])
    except _TooBig as exc:
        raise ScenarioError([exc.issue]) from None
    if issues:
        raise ScenarioError(issues)
    return data, positions


def _convert(
    node: yaml.Node, path: PathT, pos: Positions, issues: list[Issue], count: list[int]
) -> Any:
    count[0] += 1
    if count[0] > MAX_NODES or len(path) > MAX_DEPTH:
        line, col = _mark(node)
        what = (
            f"more than {MAX_NODES:,} values once aliases are expanded"
            if count[0] > MAX_NODES
            else f"nesting deeper than {MAX_DEPTH} levels once aliases are expanded"
        )
        raise _TooBig(Issue(pos.source, path_str(path), f"document too large: {what}", line, col))
    pos.values[path] = _mark(node)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        _constructor.flatten_mapping(node)  # resolves YAML merge keys (<<)
        for key_node, value_node in node.value:
            key = _convert(key_node, (*path, "<key>"), pos, issues, count)
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
            out[key] = _convert(value_node, child, pos, issues, count)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, (*path, i), pos, issues, count) for i, item in enumerate(node.value)]
    try:
        return _constructor.construct_object(node, deep=True)
    except yaml.constructor.ConstructorError as exc:
        line, col = _mark(node)
        issues.append(
            Issue(pos.source, path_str(path), f"bad YAML value: {exc.problem}", line, col)
        )
        return None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits (int's own limit)
        line, col = _mark(node)
        issues.append(Issue(pos.source, path_str(path), f"bad YAML value: {exc}", line, col))
        return None
