"""Coordinator placement in Spark equals Kafka's rule as the coordinator package computes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coordinator.java import java_string_hashcode
from coordinator.placement import partition_for
from pipeline.placement import leader_broker, place, read_ids, render_markdown, with_partition

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

# Each id stresses one way a port of String.hashCode / Utils.abs goes wrong.
TRICKY_IDS = [
    "",  # no code units: hash 0
    "polygenelubricants",  # hashes to Integer.MIN_VALUE: Utils.abs gives 0, not 2**31
    "GydZG_",  # also MIN_VALUE
    "DESIGNING WORKHOUSES",  # also MIN_VALUE
    "grupo-ñ",  # Latin-1 beyond ASCII
    "группа-42",  # Cyrillic
    "组-7",  # CJK (one UTF-16 unit, three UTF-8 bytes)
    "grp-😀-3",  # outside the BMP: a surrogate pair, two units
    "𝄞𝄞𝄞𝄞𝄞𝄞𝄞𝄞𝄞𝄞",  # many surrogate pairs: wraps 32 bits
    "my-group",
    "a" * 300,  # long: many wraps
]


@pytest.mark.parametrize("method", ["reflect", "pandas-udf"])
def test_tricky_ids_match_the_coordinator(spark: Any, method: str) -> None:
    df = spark.createDataFrame([(i,) for i in TRICKY_IDS], "group_id string")
    rows = with_partition(df, 50, method).collect()
    got = {r["group_id"]: (r["hash"], r["partition"]) for r in rows}
    want = {i: (java_string_hashcode(i), partition_for(i, 50)) for i in TRICKY_IDS}
    assert got == want
    assert got["polygenelubricants"] == (-(2**31), 0)


def test_text_file_counts_per_partition_and_broker(spark: Any, tmp_path: Path) -> None:
    ids = [f"orders-{i}" for i in range(500)] + TRICKY_IDS
    path = tmp_path / "ids.txt"
    path.write_text("\n".join(ids) + "\n", encoding="utf-8")
    report = place(spark, read_ids(spark, str(path)), num_partitions=7, brokers=3)
    want = [0] * 7
    for i in ids:
        want[partition_for(i, 7)] += 1
    assert [p.groups for p in report.partitions] == want
    assert report.total == len(ids)  # the empty line in the middle is the empty id
    per_broker = [sum(want[p] for p in range(7) if leader_broker(p, 3) == b) for b in range(3)]
    assert [b.groups for b in report.broker_loads] == per_broker
    assert report.partition_skew.maximum == max(want)
    assert report.verified == len(ids) and report.mismatches == 0
    text = render_markdown(report)
    assert f"{len(ids):,} groups" in text and "0 mismatches" in text


def test_parquet_input_skips_null_ids(spark: Any, tmp_path: Path) -> None:
    import pandas as pd

    path = tmp_path / "ids.parquet"
    pd.DataFrame({"n": [1, 2, 3], "name": ["a", None, "polygenelubricants"]}).to_parquet(path)
    report = place(spark, read_ids(spark, str(path)), num_partitions=50, brokers=1)
    assert report.total == 2
    assert report.partitions[0].groups == 1  # polygenelubricants
    assert report.partitions[partition_for("a")].groups == 1
