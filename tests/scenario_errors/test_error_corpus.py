"""Every broken scenario file in this directory states, in `# expect:` comment lines at its end,
exactly which errors the loader must report: `LINE:COLUMN PATH | message fragment | hint
fragment`. The loader must report exactly those issues (no more, no fewer), each located at
that line and column of that file, naming that field path; and `groupsim validate` must print
them and exit 2, never with a traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scenarios.cli import app
from scenarios.errors import ScenarioError
from scenarios.loader import load_scenario

HERE = Path(__file__).parent
CORPUS = sorted(HERE.glob("*.yaml"))
EXPECT = re.compile(r"^# expect: (\d+):(\d+) (\S+) \| (.+?)(?: \| (.+))?$")


def expectations(path: Path) -> list[tuple[int, int, str, str, str | None]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = EXPECT.match(line)
        if m:
            path_field = "" if m.group(3) == "-" else m.group(3)
            out.append((int(m.group(1)), int(m.group(2)), path_field, m.group(4), m.group(5)))
    return out


def test_the_corpus_covers_the_error_classes():
    assert len(CORPUS) >= 20
    assert all(expectations(p) for p in CORPUS), "every corpus file states its errors"


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_each_error_is_reported_where_it_is(path: Path):
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    issues = info.value.issues
    wanted = expectations(path)
    assert len(issues) == len(wanted), [i.format() for i in issues]
    for issue, (line, col, field, message, hint) in zip(issues, wanted, strict=True):
        assert (issue.line, issue.column) == (line, col), issue.format()
        assert issue.path == field, issue.format()
        assert message in issue.message, issue.format()
        if hint is not None:
            assert issue.hint is not None and hint in issue.hint, issue.format()
        assert issue.format().startswith(f"{issue.source}:{line}:{col}:")


@pytest.mark.parametrize("path", CORPUS[:6], ids=[p.stem for p in CORPUS[:6]])
def test_validate_command_exits_2_without_traceback(path: Path):
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    line, col, _field, message, _hint = expectations(path)[0]
    assert f":{line}:{col}:" in result.output
    assert message in result.output
