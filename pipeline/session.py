"""One place that builds the SparkSession: quiet and quick locally, unchanged on a cluster.

Local Spark is tuned for a laptop-sized machine (no UI, few shuffle partitions, loopback bind
address so no hostname warning and no port collisions, Arrow on). On a cluster none of the
host settings are applied: the driver must be reachable from the executors. The project's code
reaches executors the standard way: local mode shares this interpreter (``PYSPARK_PYTHON``), a
cluster gets a zip of the packages through ``addPyFile`` (what ``--py-files`` does), and Spark
Connect gets the same zip through ``addArtifacts(pyfile=True)``.

Spark 4 runs with ANSI SQL on: integer overflow raises instead of wrapping. The pipeline keeps it
on (a silent wrap is worse than an error) and does any 32-bit arithmetic in BIGINT.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[2]"
PACKAGES = ("coordinator", "members", "assignors", "scenarios", "pipeline")
MIN_JAVA = 17

LOCAL_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.memory": "2g",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
}
COMMON_CONF: dict[str, str] = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
}
# C1-only JIT and the serial GC halve the JVM's CPU when the work is in Python (tests, sweeps);
# JVM-heavy jobs (placement through reflect) are faster with the full JIT.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
# Errors only, and no "Using Spark's default log4j profile" banner.
LOG4J_CONF = Path(__file__).resolve().parent / "log4j2.properties"


class SparkUnavailableError(RuntimeError):
    """Spark cannot start here (no Java, no pyspark, Spark Connect client missing): say why."""


def is_local(master: str | None) -> bool:
    """``None`` means pyspark's own default (local) unless running under spark-submit."""
    if master is None:
        return "SPARK_SUBMIT_OPTS" not in os.environ and not _under_spark_submit()
    return master.startswith("local")


def _under_spark_submit() -> bool:
    # spark-submit starts the Python driver with the gateway already running.
    return "PYSPARK_GATEWAY_PORT" in os.environ


def java_version() -> int | None:
    """The major version of the ``java`` Spark would start, or None when there is none."""
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not Path(java).exists():
        return None
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        ).stderr
    except OSError:
        return None
    for line in out.splitlines():
        if "version" in line and '"' in line:
            ver = line.split('"')[1]
            head = ver.split(".")
            try:
                return int(head[1]) if head[0] == "1" else int(head[0].split("-")[0])
            except (ValueError, IndexError):
                return None
    return None


def check_java() -> None:
    """Raise a readable error, not a py4j traceback, when Java is missing or too old."""
    ver = java_version()
    if ver is None:
        raise SparkUnavailableError(
            "Java was not found (no JAVA_HOME, no `java` on PATH). The Spark pipeline needs "
            f"Java {MIN_JAVA}+: install a headless JRE (e.g. `apt-get install "
            f"openjdk-{MIN_JAVA}-jre-headless`) or run `make setup`, which does it for you."
        )
    if ver < MIN_JAVA:
        raise SparkUnavailableError(
            f"Java {ver} found, but Spark 4 needs Java {MIN_JAVA}+ (set JAVA_HOME to a newer JDK)."
        )


def package_zip(dest_dir: str | os.PathLike[str] | None = None) -> Path:
    """Zip the project's pure-Python packages for ``--py-files`` / ``addPyFile``.

    A wheel does not work there (PySpark puts only .py/.zip/.egg on the executors' path).
    """
    root = Path(__file__).resolve().parent.parent
    dest = Path(dest_dir or tempfile.mkdtemp(prefix="groupsim-pyfiles-"))
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / "groupsim-py.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for pkg in PACKAGES:
            for path in sorted((root / pkg).rglob("*")):
                if "__pycache__" in path.parts or not path.is_file():
                    continue
                if path.suffix in {".py", ".yaml", ".yml"}:
                    zf.write(path, path.relative_to(root).as_posix())
    return out


def build_session(
    master: str | None = DEFAULT_MASTER,
    *,
    app_name: str = "groupsim",
    conf: Mapping[str, str] | None = None,
    test_profile: bool = False,
    light_jvm: bool = False,
    ship_code: bool | None = None,
) -> SparkSession:
    """Build (or reuse) the SparkSession for ``master``.

    ``master=None`` sets no master at all, which is what ``spark-submit --master ...`` needs.
    ``sc://host:port`` uses Spark Connect. ``ship_code`` (default: when not local and not under
    spark-submit, whose ``--py-files`` does it) sends a zip of the packages to the executors. ``light_jvm`` (local only) starts the JVM with the C1-only JIT
    and the serial GC: for jobs whose work is in Python (sweeps, reports) it halves the JVM's CPU;
    JVM-heavy jobs (placement with ``reflect``) should leave it off. Like every JVM option it
    only takes effect for the first session of a process.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:  # pragma: no cover - the pipeline extra is installed in the venv
        raise SparkUnavailableError(
            "pyspark is not installed: `pip install -e '.[pipeline]'` (or `make setup`)."
        ) from exc

    if master is not None and master.startswith("sc://"):
        return _connect_session(master, app_name=app_name, conf=conf, ship_code=ship_code)

    check_java()
    local = is_local(master)
    if local:
        # Workers otherwise run the first `python3` on PATH, which may lack pyarrow/pandas.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    settings = dict(LOCAL_CONF if local else COMMON_CONF)
    java_opts: list[str] = []
    if not _under_spark_submit():
        # We launch the driver JVM ourselves (local, or client mode against a cluster): quiet
        # console; under spark-submit the JVM already runs and these would be ignored.
        settings["spark.ui.showConsoleProgress"] = "false"
        if LOG4J_CONF.is_file():
            java_opts.append(f"-Dlog4j2.configurationFile={LOG4J_CONF.as_uri()}")
    if local and (test_profile or light_jvm):
        java_opts.append(TEST_JVM_OPTIONS)
    if local and test_profile:
        settings["spark.sql.shuffle.partitions"] = "2"
        settings["spark.default.parallelism"] = "2"
    if java_opts:
        settings["spark.driver.extraJavaOptions"] = " ".join(java_opts)
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # py4j / PySparkRuntimeError: turn into one clear sentence
        raise SparkUnavailableError(
            f"Spark did not start ({master or 'default master'}): {exc}"
        ) from exc
    spark.sparkContext.setLogLevel("ERROR")
    # Under spark-submit the user ships the code (--py-files / --archives); adding our own zip
    # there would clash with theirs, so only a driver we launched ships it by default.
    if ship_code if ship_code is not None else not (local or _under_spark_submit()):
        spark.sparkContext.addPyFile(str(package_zip()))
    return spark


def _connect_session(
    url: str,
    *,
    app_name: str,
    conf: Mapping[str, str] | None,
    ship_code: bool | None,
) -> SparkSession:
    try:
        import grpc  # noqa: F401  (the connect extra's marker dependency)
    except ImportError as exc:
        raise SparkUnavailableError(
            f"{url} is a Spark Connect address, but the Spark Connect client is not installed. "
            "Install it with `pip install 'pyspark[connect]==4.3.0'` (adds grpcio, protobuf, "
            "zstandard), or use --master local[N] / spark://host:7077."
        ) from exc
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.remote(url).appName(app_name)
    for key, value in {**COMMON_CONF, **(conf or {})}.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:
        raise SparkUnavailableError(f"could not connect to Spark Connect at {url}: {exc}") from exc
    if ship_code is None or ship_code:
        spark.addArtifacts(str(package_zip()), pyfile=True)
    return spark


def default_parallelism(spark: SparkSession) -> int:
    """How many tasks run at once; Spark Connect has no SparkContext, so ask the conf."""
    try:
        return max(1, spark.sparkContext.defaultParallelism)
    except Exception:
        return max(1, int(spark.conf.get("spark.default.parallelism", "2") or 2))
