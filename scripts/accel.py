"""The optional compiled build: ``build``, ``clean``, ``status`` (docs/runner.md, "Performance").

    python scripts/accel.py build    # make accel: compile scenarios.accel.COMPILED_MODULES in place
    python scripts/accel.py clean    # remove the compiled files: the pure build runs again
    python scripts/accel.py status   # pure / compiled / partly compiled, and stale modules

``build`` runs mypyc (shipped with mypy, a dev dependency) and the C compiler through setuptools;
the extension files land beside the sources (``coordinator/shard.cpython-311-....so``) plus one
shared library at the top of the tree, all git-ignored; the C sources and objects go to
``build/accel``. Nothing is installed and nothing else changes: without these files the same
source runs interpreted. It needs gcc and the Python headers (Debian: build-essential,
python3-dev); when they are missing it says so and stops.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scenarios.accel import COMPILED_MODULES, compiled_modules, describe, stale_modules  # noqa: E402

BUILD_DIR = ROOT / "build" / "accel"


def _paths() -> list[str]:
    return [name.replace(".", "/") + ".py" for name in COMPILED_MODULES]


def _check_toolchain() -> str | None:
    compiler = sysconfig.get_config_var("CC") or "cc"
    if shutil.which(compiler.split()[0]) is None:
        return f"no C compiler ({compiler!r} not found; Debian: apt-get install build-essential)"
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not headers.is_file():
        return f"no Python headers ({headers} missing; Debian: apt-get install python3-dev)"
    try:
        import mypyc  # noqa: F401
    except ImportError:
        return "mypyc is not installed (it ships with mypy: pip install -c constraints.txt mypy)"
    return None


def build() -> int:
    problem = _check_toolchain()
    if problem:
        print(f"accel: cannot build the compiled modules: {problem}", file=sys.stderr)
        return 1
    from mypyc.build import mypycify
    from setuptools import Distribution

    clean(quiet=True)
    os.chdir(ROOT)  # mypyc names modules by their paths; build_ext --inplace writes beside them
    print(f"accel: compiling {len(COMPILED_MODULES)} modules with mypyc (a few minutes) ...")
    extensions = mypycify(
        [*_paths(), "--no-warn-unused-configs"],
        opt_level="3",
        target_dir=str(BUILD_DIR / "c"),
        verbose=False,
    )
    distribution = Distribution({"name": "groupsim-accel", "ext_modules": extensions})
    command = distribution.get_command_obj("build_ext")
    command.inplace = True
    command.build_temp = str(BUILD_DIR / "temp")
    command.build_lib = str(BUILD_DIR / "lib")
    distribution.run_command("build_ext")
    print(f"accel: {describe()}")
    return 0 if compiled_modules() == list(COMPILED_MODULES) else 1


def _compiled_files() -> list[Path]:
    suffixes = tuple(s for s in (".so", ".pyd"))
    found = [p for p in ROOT.glob("*__mypyc*") if p.name.endswith(suffixes)]
    for package in {name.partition(".")[0] for name in COMPILED_MODULES}:
        found += [p for p in (ROOT / package).rglob("*") if p.name.endswith(suffixes)]
    return sorted(found)


def clean(quiet: bool = False) -> int:
    files = _compiled_files()
    for path in files:
        path.unlink()
    shutil.rmtree(BUILD_DIR, ignore_errors=True)
    if not quiet:
        print(f"accel: removed {len(files)} compiled files; now {describe()}")
    return 0


def status() -> int:
    print(describe())
    for name in stale_modules():
        print(f"  stale: {name}")
    return 0


def main(argv: list[str]) -> int:
    commands = {"build": build, "clean": clean, "status": status}
    if len(argv) != 1 or argv[0] not in commands:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return commands[argv[0]]()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
