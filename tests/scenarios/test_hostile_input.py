"""Hostile and oversized scenario/sweep files: each refused quickly with a located error (exit 2),
never a traceback, a RecursionError or gigabytes of alias expansion (issue 15)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from scenarios import yamlpos
from scenarios.cli import app
from scenarios.errors import MAX_ECHO, Issue, ScenarioError
from scenarios.loader import load_scenario

MINIMAL = """\
version: 1
cluster: {topics: {T1: 2}}
consumers: [{id: C1, group: g1, topics: [T1]}]
timeline: [{at: 0s, start: all}]
"""


def _bomb(levels: int = 20) -> str:
    lines = ["version: 1", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def _errors(text_or_path: str | Path) -> list[Issue]:
    with pytest.raises(ScenarioError) as info:
        load_scenario(text_or_path)
    return info.value.issues


def test_alias_bomb_is_refused_at_its_line() -> None:
    (issue,) = _errors(_bomb())
    assert "once aliases are expanded" in issue.message
    assert issue.line is not None and issue.line >= 2


def test_alias_bomb_inside_a_legal_field() -> None:
    text = MINIMAL + "tags: &t [" + ", ".join(["x"] * 10) + "]\n"
    for i in range(8):
        text += f"t{i}: &t{i} [" + ", ".join([f"*{'t' if i == 0 else f't{i - 1}'}"] * 10) + "]\n"
    (issue,) = _errors(text)
    assert f"more than {yamlpos.MAX_NODES:,} values" in issue.message


def test_recursive_alias_is_bounded() -> None:
    (issue,) = _errors("version: 1\ntags: &a [*a]\n")
    assert "nesting deeper than" in issue.message and issue.line == 2


def test_deep_nesting_is_an_error_not_a_recursion_error() -> None:
    (issue,) = _errors("[" * 500 + "\n")
    assert issue.message.endswith(f"nesting deeper than {yamlpos.MAX_DEPTH} levels")
    assert (issue.line, issue.column) == (1, yamlpos.MAX_DEPTH + 1)


def test_nesting_up_to_the_limit_still_parses() -> None:
    data, _ = yamlpos.parse_yaml("[" * 10 + "]" * 10, "<t>")
    assert data == [[[[[[[[[[]]]]]]]]]]


def test_oversized_text_and_file(tmp_path: Path) -> None:
    big = "#" * (yamlpos.MAX_YAML_CHARS + 1)
    (issue,) = _errors(big + "\nversion: 1\n")
    assert "file too large" in issue.message
    path = tmp_path / "big.yaml"
    with path.open("wb") as f:
        f.truncate(yamlpos.MAX_YAML_CHARS * 4 + 1)  # sparse: nothing is read
    (issue,) = _errors(path)
    assert "file too large" in issue.message and "bytes" in issue.message


@pytest.mark.parametrize(
    ("content", "line", "words"),
    [
        (b"", 1, "empty"),
        (b"# only\n# comments\n", 1, "only comments"),
        (b"version: 1\nname: caf\xe9\n", 2, "not UTF-8"),
        (b"version: 1\nname: a\x00b\n", 2, "NUL"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", 1, "not UTF-8"),
    ],
)
def test_unreadable_files_have_a_line(tmp_path: Path, content: bytes, line: int, words: str):
    path = tmp_path / "f.yaml"
    path.write_bytes(content)
    (issue,) = _errors(path)
    assert issue.line == line and words in issue.message


def test_a_directory_is_not_a_scenario(tmp_path: Path) -> None:
    (issue,) = _errors(tmp_path)
    assert "directory" in issue.message


def test_a_huge_integer_is_a_located_error() -> None:
    (issue,) = _errors(MINIMAL.replace("version: 1", "version: " + "9" * 5000))
    assert issue.line == 1 and "bad YAML value" in issue.message


def test_echoed_values_are_capped() -> None:
    issues = _errors(MINIMAL.replace("version: 1", "version: " + "9" * 4000))
    (issue,) = [i for i in issues if i.path == "version"]
    assert len(issue.message) <= MAX_ECHO + 40
    assert "more characters" in issue.message
    assert len(Issue("s", "p", "x" * 10_000, hint="h" * 10_000).format()) < 3 * MAX_ECHO


def test_cli_answers_hostile_files_with_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    for name, text in {"bomb": _bomb(), "deep": "[" * 500, "empty": ""}.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        for command in ("validate", "run"):
            result = runner.invoke(app, [command, str(path)])
            assert result.exit_code == 2, (name, command, result.output)
            assert "Traceback" not in result.output
            assert f"{name}.yaml:1:" in result.output or f"{name}.yaml:2:" in result.output
