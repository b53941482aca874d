"""Compare groupsim's server-side assignors with Kafka's on seeded random groups.

    python scripts/sweep_server_assignors_vs_java.py [--seed=S] [--cases=N] [--record]

Kafka's ``UniformAssignor`` and ``RangeAssignor`` (apache/kafka 1eb7644, built from the git
mirror by tools/server-assignor-bench/build.sh, as ``make bench`` does) and groupsim's assign
cases ``0..N-1`` of ``bench.server_sweep`` (random partition counts and subscriptions, 2 to 600
members, FULL and INCREMENTAL); each assignment's CRC32 in iteration order is compared
(``bench.server_assignors.digest``). Differences are printed and the exit status is 1.
``--record`` writes Kafka's digests to
``tests/coordinator/assignor/data/kafka_server_assignor_sweep.json``, which
``tests/coordinator/assignor/test_kafka_random_digests.py`` replays in ``make test``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.server_assignors import digest, java_classpath, time_java  # noqa: E402
from bench.server_sweep import GENERATOR, RandomInputs, case  # noqa: E402
from coordinator.assignor.registry import get_assignor  # noqa: E402

OUT = ROOT / "tests" / "coordinator" / "assignor" / "data" / "kafka_server_assignor_sweep.json"


def _flag(argv: list[str], name: str, default: str) -> str:
    return next((a.split("=", 1)[1] for a in argv if a.startswith(f"--{name}=")), default)


def main(argv: list[str]) -> int:
    seed = int(_flag(argv, "seed", "1"))
    count = int(_flag(argv, "cases", "100"))
    classpath, message = java_classpath()
    if classpath is None:
        print(f"sweep_server_assignors_vs_java: {message}", file=sys.stderr)
        return 1
    cases = [case(seed, i) for i in range(count)]
    by_label = {c.label: i for i, c in enumerate(cases)}
    start = time.perf_counter()
    differ = 0
    recorded: dict[int, str] = {}
    answers = time_java(
        classpath, cases, 0, min_iters=1, inputs=lambda c: RandomInputs(seed, by_label[c.label])
    )
    for i, (shape, java) in enumerate(zip(cases, answers, strict=True)):
        if "error" in java:
            print(f"case {i}: Kafka: {java['error']}", file=sys.stderr)
            return 1
        recorded[i] = java["digest"]
        spec, describer = RandomInputs(seed, i).python_spec()
        ours = digest(get_assignor(shape.assignor).assign(spec, describer))
        if ours != java["digest"]:
            differ += 1
            print(f"case {i} ({shape.label}): differs from Kafka", flush=True)
    print(
        f"seed {seed}: {count} cases, {differ} differ from Kafka "
        f"({time.perf_counter() - start:.0f} s)"
    )
    if "--record" in argv and not differ:
        java_version = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
        OUT.write_text(
            json.dumps(
                {
                    "about": "Kafka's UniformAssignor/RangeAssignor (apache/kafka 1eb7644) on "
                    "bench.server_sweep's random groups: CRC32 of each assignment in Java order "
                    "(bench/server_assignors.py digest). Re-record: python "
                    "scripts/sweep_server_assignors_vs_java.py --seed=S --cases=N --record",
                    "jvm": java_version.splitlines()[0] if java_version else "",
                    "generator": GENERATOR,
                    "seed": seed,
                    "digests": [recorded[i] for i in range(count)],
                },
                indent=0,
            )
            + "\n"
        )
        print(f"recorded {count} digests to {OUT.relative_to(ROOT)}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
