"""The optional compiled build (``make accel``, scenarios/accel.py): same source, same logs.

The equality check needs the compiled build, which ``make test`` never builds (it needs a C
compiler and minutes): it is skipped without one, and ``make accel-check`` runs it after
``make accel``. What the pure build can check, it checks: ``force_pure`` really imports the
sources, and refuses to act too late.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scenarios.accel import COMPILED_MODULES, build_kind, force_pure

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str) -> str:
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_force_pure_imports_every_accelerated_module_from_its_source() -> None:
    imports = "; ".join(f"import {name}" for name in COMPILED_MODULES)
    out = _python(
        "from scenarios.accel import force_pure, build_kind; force_pure(); "
        f"{imports}; import json, sys; "
        f"print(json.dumps({{n: sys.modules[n].__file__ for n in {list(COMPILED_MODULES)!r}}}))"
    )
    files = json.loads(out)
    assert set(files) == set(COMPILED_MODULES)
    for name, path in files.items():
        assert path == str(ROOT / (name.replace(".", "/") + ".py")), name


def test_force_pure_refuses_once_a_module_is_imported() -> None:
    import scenarios.simulation  # noqa: F401  (already imported by the suite; made sure here)

    with pytest.raises(RuntimeError, match=r"after .* was imported"):
        force_pure()


@pytest.mark.skipif(
    build_kind() != "compiled",
    reason=f"no complete compiled build ({build_kind()}): make accel, then make accel-check",
)
def test_compiled_build_writes_the_same_logs_as_the_pure_one() -> None:
    run_digests = (
        "import runpy, sys; sys.argv = ['log_digests.py']; "
        "runpy.run_path('scripts/log_digests.py', run_name='__main__')"
    )
    check = (
        "import scenarios.simulation; from scenarios.accel import running_kind; "
        "assert running_kind() == {!r}, running_kind(); "
    )
    compiled = _python(check.format("compiled") + run_digests)
    pure = _python(
        "from scenarios.accel import force_pure; force_pure(); "
        + check.format("pure")
        + run_digests
    )
    compiled_digests, pure_digests = json.loads(compiled), json.loads(pure)
    assert len(pure_digests) > 50  # every lesson, the noisy runs and the quick benchmarks
    differ = sorted(
        name for name in pure_digests if compiled_digests.get(name) != pure_digests[name]
    )
    assert differ == [] and compiled_digests.keys() == pure_digests.keys()
