"""The custom-assignor extension point, and the snippets of docs/assignors.md, run for real.

The doc marks its blocks with HTML comments: ``<!-- file: path -->`` before a module to write,
``<!-- run: name -->`` before code to execute and ``<!-- output: name -->`` before the text it must
print. The README quotes the quick start, so its output is checked here too.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

import pytest

from assignors import PartitionAssignor, RebalanceProtocol, Subscription, get_assignor, metrics
from assignors.registry import UnknownAssignorError

DOC = Path(__file__).resolve().parents[2] / "docs" / "assignors.md"
BLOCK = re.compile(r"<!-- (file|run|output): (\S+) -->\s*```[a-z]*\n(.*?)```", re.S)


def doc_blocks() -> dict[tuple[str, str], str]:
    return {
        (kind, name): body for kind, name, body in BLOCK.findall(DOC.read_text(encoding="utf-8"))
    }


@pytest.fixture
def doc_modules(tmp_path, monkeypatch):
    """Write the doc's ``file:`` blocks under tmp_path and make them importable."""
    for (kind, name), body in doc_blocks().items():
        if kind == "file":
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            init = path.parent / "__init__.py"
            if not init.exists():
                init.write_text("")
            path.write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for module in [m for m in sys.modules if m == "mypkg" or m.startswith("mypkg.")]:
        del sys.modules[module]


def run_snippet(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {"__name__": "__doc_snippet__"})
    return out.getvalue()


def test_doc_has_the_expected_snippets():
    blocks = doc_blocks()
    for key in [
        ("run", "quickstart"),
        ("output", "quickstart"),
        ("file", "mypkg/fewest_first.py"),
        ("run", "custom"),
        ("output", "custom"),
    ]:
        assert key in blocks, key


@pytest.mark.parametrize("name", ["quickstart", "custom"])
def test_doc_snippet_prints_what_the_doc_says(name, doc_modules):
    blocks = doc_blocks()
    assert run_snippet(blocks[("run", name)]) == blocks[("output", name)]


def test_custom_assignor_follows_the_contract(doc_modules):
    assignor = get_assignor("mypkg.fewest_first:FewestFirstAssignor")
    assert isinstance(assignor, PartitionAssignor)
    assert assignor.name == "fewest-first"
    assert assignor.supported_protocols == (RebalanceProtocol.EAGER,)
    assert assignor.subscription_user_data(["t0"]) is None
    subs = {f"m{i}": Subscription(["a", "b"]) for i in range(3)}
    subs["lazy"] = Subscription(["missing"])
    result = assignor.assign({"a": 4, "b": 3}, subs)
    assert metrics.validity({"a": 4, "b": 3}, subs, result).complete
    assert result["lazy"] == []


def test_registering_the_doc_example_by_short_name(doc_modules, monkeypatch):
    from assignors import registry

    monkeypatch.setattr(registry, "_registered", {})
    with pytest.raises(UnknownAssignorError):
        get_assignor("fewest-first")
    from mypkg.fewest_first import FewestFirstAssignor

    registry.register_assignor(FewestFirstAssignor)
    assert type(get_assignor("fewest-first")) is FewestFirstAssignor
