"""Re-record the Kafka-oracle traces the test suite replays (tests/oracle/data/).

Needs a built oracle (tools/kafka-oracle/Oracle.java, built as docs/oracle.md says); this
command builds nothing. It generates the seeded scripts against the oracle and writes, per
script, the ops and Kafka's answers as xz-compressed JSON lines.

    python scripts/record_oracle_traces.py --oracle /tmp/kafka-oracle-build/oracle.sh
    python scripts/record_oracle_traces.py --oracle ... --suite classic --scripts 200 --out /tmp/x.jsonl.xz
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.oracle import generate  # noqa: E402
from tests.oracle.oracle_process import OracleProcess  # noqa: E402
from tests.oracle.replay import DATA, compact  # noqa: E402

# suite name -> (generator, number of scripts, first seed)
SUITES = {
    "classic": (generate.record, 3000, 0),
    "offsets": (generate.record_offsets, 1000, 100_000),
    "txn": (generate.record_txn, 1000, 200_000),
    "failover": (generate.record_failover, 600, 300_000),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", required=True, help="the command that runs the built oracle")
    parser.add_argument("--suite", choices=sorted(SUITES), action="append")
    parser.add_argument("--scripts", type=int, help="how many scripts (default: the suite's)")
    parser.add_argument("--out", type=Path, help="output file (default: tests/oracle/data/)")
    args = parser.parse_args()
    for name in args.suite or sorted(SUITES):
        record, count, first = SUITES[name]
        count = args.scripts or count
        out = args.out or DATA / f"{name}.jsonl.xz"
        out.parent.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        oracle = OracleProcess(args.oracle)
        ops = 0
        with lzma.open(out, "wt", preset=9) as f:
            for seed in range(first, first + count):
                script = record(seed, oracle)
                oracle.reset()
                ops += len(script["ops"])
                script["out"] = compact(script["out"])
                f.write(json.dumps(script, separators=(",", ":")) + "\n")
        oracle.close()
        took = time.monotonic() - started
        print(
            f"{name}: {count} scripts, {ops} ops -> {out} ({out.stat().st_size} bytes, {took:.0f} s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
