"""A scenario file is data: it runs no code of its own unless the user allows it (issue 15).

``module:Class`` assignor names import their module (its top-level code runs), so they need
``allow_code`` / ``--allow-code``; assignors installed under the ``groupsim.assignors`` entry point
are trusted by their installation and work by name.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assignors import available_assignors, get_assignor
from assignors.registry import ENTRY_POINT_GROUP, UnknownAssignorError
from scenarios.cli import app
from scenarios.errors import ScenarioError
from scenarios.loader import load_scenario

ASSIGNOR_MODULE = """\
from pathlib import Path
Path({marker!r}).write_text("imported")

from assignors import PartitionAssignor, partitions_of
from assignors.api import as_cluster


class AllToFirst(PartitionAssignor):
    name = {name!r}

    def assign(self, cluster, subscriptions):
        out = {{m: [] for m in subscriptions}}
        first = sorted(subscriptions)[0]
        for topic, count in sorted(as_cluster(cluster).partitions_per_topic.items()):
            out[first].extend(partitions_of(topic, count))
        return out
"""


def scenario(strategy: str) -> str:
    return f"""\
version: 1
name: trust
cluster: {{topics: {{T1: 2}}}}
defaults: {{partition.assignment.strategy: ["{strategy}"]}}
consumers: [{{count: 2, id: "C{{i}}", group: g1, topics: [T1]}}]
timeline: [{{at: 0s, start: all}}]
expect:
  - {{state: Stable, assignment: {{C0: [T1-0, T1-1], C1: []}}}}
"""


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A module ``trustpkg_mod`` whose import leaves a marker file behind."""
    marker = tmp_path / "imported.txt"
    (tmp_path / "trustpkg_mod.py").write_text(
        ASSIGNOR_MODULE.format(marker=str(marker), name="all-to-first")
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield marker
    sys.modules.pop("trustpkg_mod", None)


def test_module_class_is_refused_without_permission_and_not_imported(user_module: Path):
    with pytest.raises(ScenarioError) as info:
        load_scenario(scenario("trustpkg_mod:AllToFirst"))
    (issue,) = info.value.issues
    assert issue.line == 4 and "names Python code" in issue.message
    assert "--allow-code" in (issue.hint or "")
    assert not user_module.exists()


def test_allowed_module_class_is_loaded_at_validation(user_module: Path):
    s = load_scenario(scenario("trustpkg_mod:AllToFirst"), allow_code=True)
    assert user_module.exists()
    from scenarios.runner import run_scenario

    assert run_scenario(s).passed


def test_allowed_but_missing_module_is_an_error_at_its_line():
    with pytest.raises(ScenarioError) as info:
        load_scenario(scenario("no_such_pkg_xyz.mod:Thing"), allow_code=True)
    (issue,) = info.value.issues
    assert issue.line == 4 and "cannot be loaded" in issue.message


def test_cli_validate_and_run(user_module: Path, tmp_path: Path):
    path = tmp_path / "s.yaml"
    path.write_text(scenario("trustpkg_mod:AllToFirst"))
    runner = CliRunner()
    for command in ("validate", "run", "step"):
        result = runner.invoke(app, [command, str(path)])
        assert result.exit_code == 2 and "s.yaml:4:" in result.output, result.output
        assert not user_module.exists()
    assert runner.invoke(app, ["validate", "--allow-code", str(path)]).exit_code == 0
    result = runner.invoke(app, ["run", "--allow-code", str(path)])
    assert result.exit_code == 0, result.output


@pytest.fixture
def installed_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A distribution on sys.path declaring a ``groupsim.assignors`` entry point."""
    marker = tmp_path / "plugin-imported.txt"
    (tmp_path / "trustplugin_mod.py").write_text(
        ASSIGNOR_MODULE.format(marker=str(marker), name="all-to-first-plugin")
    )
    info = tmp_path / "trustplugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: trustplugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nall-to-first-plugin = trustplugin_mod:AllToFirst\n"
        "broken-plugin = trustplugin_mod:Nope\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield marker
    sys.modules.pop("trustplugin_mod", None)


def test_entry_point_assignor_is_available_by_name(installed_plugin: Path):
    assert "all-to-first-plugin" in available_assignors()
    assert not installed_plugin.exists()  # listed, not imported
    s = load_scenario(scenario("all-to-first-plugin"))  # no permission needed
    from scenarios.runner import run_scenario

    assert run_scenario(s).passed
    with pytest.raises(UnknownAssignorError, match=r"broken-plugin.*cannot be loaded"):
        get_assignor("broken-plugin")
