"""Compare groupsim's client assignors with Kafka's on seeded random groups of 2 to 400 members.

    python scripts/sweep_client_assignors_vs_java.py [--seed=S] [--cases=N] [--racks]
        [--range-roundrobin] [--record] [--keep=DIR]

Builds Kafka's client assignors from the git mirror (tools/client-assignor-bench/build.sh, as
``make bench`` does) and the driver ``tests/assignors/data/StickyDriver.java``, feeds it cases
``0..N-1`` of ``tests/assignors/sweep_cases.generate(S, i)`` in one JVM, and compares every
member's list, in order, with groupsim's ``StickyAssignor`` / ``CooperativeStickyAssignor``;
``--racks`` gives the same cases replica and member racks (``generate_with_racks``, KIP-881);
``--range-roundrobin`` runs them through ``RangeAssignor`` / ``RoundRobinAssignor`` instead, half
with racks and some members static (``generate_range_roundrobin``).
A difference is printed, the case written to ``--keep`` (default ``/tmp/sticky-sweep``) and the
exit status is 1. Cases where Kafka throws (the ``NullPointerException`` of
docs/sticky-assignors.md) are counted and skipped.

``--record`` also writes the digest of each of Kafka's answers to
``tests/assignors/data/sticky_kafka_java_sweep.json`` (``--racks``:
``sticky_kafka_java_rack_sweep.json``; ``--range-roundrobin``:
``range_roundrobin_kafka_java_sweep.json``), which
``tests/assignors/test_sticky_kafka_java_sweep.py`` replays in ``make test`` (CI has no Kafka).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.assignors.sweep_cases import (  # noqa: E402
    GENERATOR,
    Case,
    assign,
    digest,
    generate,
    generate_range_roundrobin,
    generate_with_racks,
)

BUILD = ROOT / "tools" / "client-assignor-bench" / "build.sh"
DRIVER = ROOT / "tests" / "assignors" / "data" / "StickyDriver.java"
DATA = ROOT / "tests" / "assignors" / "data"


def _flag(argv: list[str], name: str, default: str) -> str:
    return next((a.split("=", 1)[1] for a in argv if a.startswith(f"--{name}=")), default)


def driver_classpath() -> str:
    """Kafka's client classes plus the compiled driver (rebuilt when the driver changes)."""
    built = subprocess.run(["bash", str(BUILD)], capture_output=True, text=True)
    if built.returncode:
        raise SystemExit(
            f"sweep_client_assignors_vs_java: cannot build Kafka's assignors: {built.stderr}"
        )
    kafka = built.stdout.strip().splitlines()[-1]
    out = Path(kafka.split(":")[0]).parent / "sticky-driver"
    stamp = out / f".built-{DRIVER.stat().st_mtime_ns}"
    if not stamp.exists():
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["javac", "-nowarn", "-proc:none", "-d", str(out), "-cp", kafka, str(DRIVER)],
            check=True,
        )
        stamp.touch()
    return f"{out}:{kafka}"


def driver_text(case: Case) -> str:
    """The case in StickyDriver's input format; topics nobody subscribes to are left out, as
    ``AbstractPartitionAssignor.assign`` passes only the subscribed topics' partition counts."""
    lines = [f"case {case['kind']}{' prefer' if case.get('prefer') else ''}"]
    subscribed = {t for member in case["members"] for t in member[2]}
    racks = case.get("racks")
    for t, c in case["counts"].items():
        if t in subscribed:
            replicas = ";".join("|".join(r) for r in racks[t]) if racks else ""
            lines.append(f"topic {t} {c} {replicas}".rstrip())
    for name, generation, topics, owned, *extra in case["members"]:
        gen = "-" if generation is None else str(generation)
        listed = ",".join(topics) or "-"
        claims = ",".join(f"{t}:{p}" for t, p in owned) or "-"
        rack_and_instance = "".join(f" {x or '-'}" for x in extra)
        lines.append(f"member {name} {gen} {listed} {claims}{rack_and_instance}")
    lines.append("end")
    return "\n".join(lines) + "\n"


def run_java(cases: list[Case]) -> list[dict[str, list[str]] | str]:
    """Kafka's answer for each case: member -> list, or the name of the exception it threw."""
    out = subprocess.run(
        ["java", "-cp", driver_classpath(), "org.apache.kafka.clients.consumer.StickyDriver"],
        input="".join(map(driver_text, cases)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    answers: list[dict[str, list[str]] | str] = []
    for block in out.split("done\n")[: len(cases)]:
        lines = block.strip().splitlines()[1:]  # after "result"
        if lines and lines[0].startswith("error "):
            answers.append(lines[0].split(" ", 1)[1])
            continue
        lists = {}
        for line in lines:
            _, member, *rest = line.split(" ")
            lists[member] = rest[0].split(",") if rest and rest[0] else []
        answers.append(lists)
    return answers


def main(argv: list[str]) -> int:
    seed = int(_flag(argv, "seed", "1"))
    count = int(_flag(argv, "cases", "100"))
    keep = Path(_flag(argv, "keep", "/tmp/sticky-sweep"))
    with_racks = "--racks" in argv
    simple = "--range-roundrobin" in argv
    make = generate_range_roundrobin if simple else generate_with_racks if with_racks else generate
    out = DATA / (
        "range_roundrobin_kafka_java_sweep.json"
        if simple
        else "sticky_kafka_java_rack_sweep.json"
        if with_racks
        else "sticky_kafka_java_sweep.json"
    )
    cases = [make(seed, i) for i in range(count)]
    start = time.perf_counter()
    answers = run_java(cases)
    java_s = time.perf_counter() - start
    differ = errors = 0
    recorded: list[list[object]] = []
    for i, (case, answer) in enumerate(zip(cases, answers, strict=True)):
        order = [m[0] for m in case["members"]]
        if isinstance(answer, str):
            errors += 1
            recorded.append([i, f"error:{answer}"])
            continue
        recorded.append([i, digest(order, answer)])
        result = assign(case)
        ours = {m: [f"{tp.topic}:{tp.partition}" for tp in parts] for m, parts in result.items()}
        if ours != answer:
            differ += 1
            keep.mkdir(parents=True, exist_ok=True)
            path = keep / f"seed{seed}-case{i}.json"
            path.write_text(json.dumps({"case": case, "expected": answer}))
            moved = sum(ours.get(m) != answer[m] for m in answer)
            print(
                f"case {i} ({case['kind']}, {len(order)} members): {moved} members' lists "
                f"differ from Kafka's; written to {path}"
            )
    print(
        f"seed {seed}: {count} cases ({errors} where Kafka throws), {differ} differ from Kafka "
        f"(Java {java_s:.0f} s, whole run {time.perf_counter() - start:.0f} s)"
    )
    if "--record" in argv and not differ:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
        classes = (
            "RangeAssignor/RoundRobinAssignor"
            if simple
            else "StickyAssignor/CooperativeStickyAssignor"
        )
        flags = "--range-roundrobin " if simple else "--racks " if with_racks else ""
        out.write_text(
            json.dumps(
                {
                    "about": f"Kafka's {classes} (apache/kafka 1eb7644) on "
                    f"tests/assignors/sweep_cases.{make.__name__}(seed, i): CRC32 of every "
                    "member's list in input order (sweep_cases.digest). Re-record: python "
                    f"scripts/sweep_client_assignors_vs_java.py --seed=S --cases=N {flags}--record",
                    "jvm": java.splitlines()[0] if java else "",
                    "generator": GENERATOR,
                    "racks": with_racks,
                    "range_roundrobin": simple,
                    "seed": seed,
                    "cases": recorded,
                },
                indent=0,
            )
            + "\n"
        )
        print(f"recorded {len(recorded)} answers to {out.relative_to(ROOT)}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
