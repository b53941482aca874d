"""The README tells the truth: its scenario runs green, its outputs are what the code prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from typer.testing import CliRunner

from scenarios.cli import app
from scenarios.loader import load_scenario
from scenarios.runner import run_scenario

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_the_readme_scenario_is_valid_and_its_expectations_hold() -> None:
    [yaml_text] = blocks("yaml")
    result = run_scenario(load_scenario(yaml_text))
    assert result.error is None
    assert result.expectations and all(e.passed for e in result.expectations)


def test_the_readme_timeline_excerpt_is_what_the_lesson_prints() -> None:
    printed = CliRunner().invoke(app, ["run", "demo-what-is-a-rebalance"]).output
    excerpt = next(b for b in blocks("text") if ">> start C1" in b)
    for line in excerpt.splitlines():
        if line.strip() != "...":
            assert line in printed, line


def test_the_assignor_snippet_prints_the_output_shown() -> None:
    code = next(b for b in blocks("python") if "get_assignor" in b)
    shown = next(b for b in blocks("text") if b.startswith("range      C0"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue() == shown


def test_the_cli_examples_print_what_the_readme_shows() -> None:
    text = next(b for b in blocks("text") if b.startswith("$ groupsim assign"))
    for chunk in text.split("$ groupsim ")[1:]:
        command, _, expected = chunk.partition("\n")
        args = command.split()
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert result.output.strip() == expected.strip()


def test_the_pytest_example_is_the_one_the_runner_docs_run() -> None:
    example = next(b for b in blocks("python") if "def test_" in b)
    assert example in (ROOT / "docs" / "runner.md").read_text(encoding="utf-8")
