"""Functions that run on Spark executors.

They live in the installed package (never in ``__main__`` or a test module) so that executors can
import them by reference. pandas is imported at module level because PySpark reads the pandas
UDF's type hints to pick its kind; this module is only imported once Spark is in use.
"""

import pandas as pd


def java_hash(ids: pd.Series) -> pd.Series:
    """Java's ``String.hashCode`` of each id (nullable int32), vectorised with numpy."""
    from coordinator.java import java_string_hashcodes

    present = ids.notna()
    out = pd.Series(pd.NA, index=ids.index, dtype="Int32")
    if present.any():
        out[present] = java_string_hashcodes(ids[present].tolist())
    return out


def java_hash_udf():
    """``java_hash`` wrapped as a scalar pandas UDF returning INT."""
    from pyspark.sql.functions import pandas_udf

    return pandas_udf(java_hash, "int")  # type: ignore[call-overload]
