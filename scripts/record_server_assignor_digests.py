"""Record Kafka's own server-side assignments on a slice of its benchmark grid, as test data.

    python scripts/record_server_assignor_digests.py [--members=100,500] [--ratios=5,10,50]
        [--topics=10,100,1000]

Runs Kafka's ``UniformAssignor`` and ``RangeAssignor`` (apache/kafka 1eb7644, built from the git
mirror by tools/server-assignor-bench/build.sh, as ``make bench`` does) on every case of the slice
(``bench.server_assignors.grid``: homogeneous and heterogeneous, FULL and INCREMENTAL) and writes
the CRC32 digest of each assignment, members sorted and each member's topics and partitions in
Java's iteration order, to ``tests/coordinator/assignor/data/kafka_server_assignor_digests.json``.
``tests/coordinator/assignor/test_kafka_grid_digests.py`` replays the slice through groupsim's
assignors and compares; CI has no Kafka build, so the answers are recorded once here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.server_assignors import grid, java_classpath, parse_axes, time_java  # noqa: E402

OUT = ROOT / "tests" / "coordinator" / "assignor" / "data" / "kafka_server_assignor_digests.json"
DEFAULT_AXES = {"members": (100, 500), "ratios": (5, 10, 50), "topics": (10, 100, 1000)}


def main(argv: list[str]) -> int:
    try:
        axes = {**DEFAULT_AXES, **parse_axes(argv)}
    except ValueError as exc:
        print(f"record_server_assignor_digests: {exc}", file=sys.stderr)
        return 2
    classpath, message = java_classpath()
    if classpath is None:
        print(f"record_server_assignor_digests: {message}", file=sys.stderr)
        return 1
    cases = grid(quick=False, full=False, axes=axes)
    digests = {}
    for case, answer in zip(cases, time_java(classpath, cases, 0, min_iters=1), strict=True):
        if "error" in answer:
            print(f"{case.label}: {answer['error']}", file=sys.stderr)
            return 1
        digests[case.label] = answer["digest"]
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    OUT.write_text(
        json.dumps(
            {
                "about": "Kafka's UniformAssignor/RangeAssignor (apache/kafka 1eb7644) on a slice "
                "of ServerSideAssignorBenchmark's grid: CRC32 of each assignment in Java order "
                "(bench/server_assignors.py digest). Re-record: "
                "python scripts/record_server_assignor_digests.py",
                "jvm": java.splitlines()[0] if java else "",
                "axes": {k: list(v) for k, v in axes.items()},
                "digests": digests,
            },
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )
    print(f"{len(digests)} digests -> {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
