"""Recorded oracle scripts on disk, and the re-record command line shared by the KIP-848 and
mixed-protocol generators: one script per line of an xz-compressed JSON-lines file."""

from __future__ import annotations

import argparse
import json
import lzma
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tests.oracle.oracle_process import OracleProcess

Script = dict[str, Any]


def read_scripts(path: Path) -> list[Script]:
    with lzma.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_scripts(path: Path, scripts: list[Script]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with lzma.open(path, "wt", encoding="utf-8") as f:
        for script in scripts:
            f.write(json.dumps(script, separators=(",", ":")) + "\n")


def record_seeds(
    oracle_command: str, seeds: range, play: Callable[[OracleProcess, int], Script]
) -> list[Script]:
    """One script per seed, each ``play``ed on the same oracle process (reset in between)."""
    process = OracleProcess(oracle_command)
    try:
        scripts = []
        for seed in seeds:
            scripts.append(play(process, seed))
            process.reset()
        return scripts
    finally:
        process.close()


def record_command(
    description: str | None,
    record: Callable[[str, range], list[Script]],
    data: Path,
    default_seeds: str,
) -> None:
    """``--oracle CMD --seeds A:B``: record the seeds' scripts from a built oracle into ``data``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--oracle", required=True, help="the command that runs Oracle.java")
    parser.add_argument("--seeds", default=default_seeds)
    args = parser.parse_args()
    first, last = (int(x) for x in args.seeds.split(":"))
    scripts = record(args.oracle, range(first, last))
    write_scripts(data, scripts)
    print(f"{len(scripts)} scripts -> {data}")


def disagreements(
    scripts: Iterable[Script], replay: Callable[[Script], list[str]], known: dict[int, str]
) -> list[str]:
    """What a trace suite reports: each script that differs from Kafka (its first two
    differences), and each listed known divergence that agrees with Kafka now."""
    failures = []
    for script in scripts:
        diffs = replay(script)
        seed = script["seed"]
        if seed in known:
            if not diffs:
                failures.append(f"seed {seed} agrees with Kafka now: take it out of the list")
        elif diffs:
            failures.append("\n".join(diffs[:2]))
    return failures
