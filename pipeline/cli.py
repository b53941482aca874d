"""The pipeline's ``groupsim`` commands: sweep, sweep-report, placement, log-report.

``scenarios.cli`` calls ``register(app)`` at import time, so this module must stay cheap to import:
pyspark, pandas and matplotlib are imported inside the commands, and no command but these four
ever starts a JVM. Exit codes follow the CLI's: 0 done, 1 Spark could not run (or sweep rows failed), 2 invalid input.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2
EXIT_ROWS_FAILED = EXIT_FAILED  # a sweep whose rows failed (unless --allow-failures)

MasterOpt = Annotated[
    str | None,
    typer.Option(
        "--master",
        help="Spark master: local[2] (default), local[*], spark://host:7077, sc://host:15002 "
        "(Spark Connect), yarn. Under spark-submit leave it out.",
    ),
]
ConfOpt = Annotated[
    list[str] | None,
    typer.Option("--conf", help="Extra Spark setting KEY=VALUE (repeatable)."),
]


def _err(message: str) -> None:
    from rich.console import Console

    Console(file=sys.stderr, highlight=False, soft_wrap=True).print(
        message, markup=False, style="red"
    )


def _confs(items: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"--conf wants KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def _default_master(master: str | None) -> str | None:
    """local[2] unless spark-submit launched us (then its --master rules)."""
    from pipeline.session import DEFAULT_MASTER, _under_spark_submit

    if master is not None:
        return master
    return None if _under_spark_submit() else DEFAULT_MASTER


def _session(
    master: str | None, conf: list[str] | None, app_name: str, *, light_jvm: bool = True
) -> Any:
    """The session; light_jvm (C1 JIT, serial GC) unless the job's work is in the JVM."""
    from pipeline.session import SparkUnavailableError, build_session

    try:
        return build_session(
            _default_master(master), app_name=app_name, conf=_confs(conf), light_jvm=light_jvm
        )
    except SparkUnavailableError as exc:
        _err(f"groupsim: {exc}")
        raise typer.Exit(EXIT_FAILED) from None


def sweep(
    sweep_file: Annotated[Path, typer.Argument(help="The sweep YAML file.")],
    out: Annotated[
        str,
        typer.Option(
            "--output", "-o", "--out", help="Output directory or URI (file:///, s3a://, hdfs://)."
        ),
    ],
    master: MasterOpt = None,
    conf: ConfOpt = None,
    tasks: Annotated[int | None, typer.Option(help="Spark tasks to split the rows into.")] = None,
    report: Annotated[
        Path | None,
        typer.Option("--report", help="Also write the sweep-report here (same Spark session)."),
    ] = None,
    allow_failures: Annotated[
        bool,
        typer.Option(
            "--allow-failures", help="Exit 0 even when rows failed (their errors are printed)."
        ),
    ] = False,
    allow_code: Annotated[
        bool,
        typer.Option(
            "--allow-code",
            help="The base scenario and the variants may name module:Class assignors "
            "(imports them: only for files you trust).",
        ),
    ] = False,
) -> None:
    """Run every scenario of a sweep on Spark; write Parquet datasets runs/ and rebalances/.

    Rows that failed are listed with their errors (the runs table's error column); the exit code
    is then 1 unless --allow-failures.

    Example: groupsim sweep pipeline/examples/rolling-restart-cost.yaml --out /tmp/rr --report /tmp/rr-report
    """
    from pipeline.spec import SweepError, load_sweep

    try:
        spec = load_sweep(sweep_file, allow_code=allow_code)
    except SweepError as exc:
        for issue in exc.issues:
            _err(issue.format())
        raise typer.Exit(EXIT_INVALID) from None
    print(
        f"sweep {spec.name}: {spec.size} runs of {spec.base_source} "
        f"({len(spec.variants) or 1} variants x grid x {len(spec.seeds)} seeds)",
        file=sys.stderr,
    )
    spark = _session(master, conf, f"groupsim-sweep-{spec.name}")
    from pipeline.sweep import run_sweep

    with _progress_reporter() as show_progress:
        summary = run_sweep(spark, spec, out, tasks=tasks, progress=show_progress)
    print(
        f"{summary.runs} runs ({summary.failed} failed), {summary.rebalances} rebalances "
        f"in {summary.seconds:.1f} s -> {summary.out}/runs, {summary.out}/rebalances"
    )
    if summary.failed:
        _err(f"{summary.failed} of {summary.runs} runs failed:")
        for scenario_id, variant, seed, error in summary.errors:
            text = "; ".join(line.strip() for line in error.strip().splitlines() if line.strip())
            text = text if len(text) <= 300 else text[:300] + "..."
            _err(f"  row {scenario_id} (variant {variant}, seed {seed}): {text or '(no message)'}")
        if summary.failed > len(summary.errors):
            _err(f"  ... and {summary.failed - len(summary.errors)} more")
        _err(f"(every error is in the error column of {summary.out}/runs)")
    if report is not None:
        from pipeline.report import write_sweep_report

        print(f"report: {write_sweep_report(spark, summary.out, report)}")
    if summary.failed and not allow_failures:
        raise typer.Exit(EXIT_ROWS_FAILED)


class _progress_reporter:
    """A rich progress bar on a terminal, plain lines (at most one per change) otherwise."""

    def __init__(self, label: str = "sweep") -> None:
        self.label = label

    def __enter__(self) -> Any:
        if sys.stderr.isatty():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            self.bar: Any = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(f"{self.label}: Spark tasks", total=None)

            def report(done: int, total: int) -> None:
                self.bar.update(self.task, completed=done, total=total)

            return report
        self.bar = None
        from pipeline.sweep import print_progress

        label = self.label
        return lambda done, total: print_progress(done, total, label)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def sweep_report(
    sweep_dir: Annotated[
        str, typer.Argument(help="A sweep's output directory (runs/, rebalances/).")
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write report.md and the PNG plots.")
    ],
    master: MasterOpt = None,
    conf: ConfOpt = None,
) -> None:
    """Aggregate a sweep with Spark SQL into a Markdown report with PNG plots.

    Example: groupsim sweep-report /tmp/rr -o /tmp/rr-report
    """
    if "://" not in sweep_dir and not (Path(sweep_dir) / "runs").is_dir():
        _err(
            f"groupsim: {sweep_dir} has no runs/ dataset: is it a `groupsim sweep --out` directory?"
        )
        raise typer.Exit(EXIT_INVALID)
    spark = _session(master, conf, "groupsim-sweep-report")
    from pipeline.report import ReportInputError, write_sweep_report

    try:
        path = write_sweep_report(spark, sweep_dir, output)
    except ReportInputError as exc:
        _err(f"groupsim: {exc}")
        raise typer.Exit(EXIT_INVALID) from None
    print(f"report: {path}")


def placement(
    ids_file: Annotated[
        str, typer.Argument(help="Group ids: a text file (one a line) or Parquet.")
    ],
    partitions: Annotated[
        int, typer.Option("--partitions", "-p", help="offsets.topic.num.partitions")
    ] = 50,
    brokers: Annotated[
        int, typer.Option("--brokers", "-b", help="Brokers leading those partitions.")
    ] = 3,
    method: Annotated[
        str, typer.Option(help="reflect (JVM String.hashCode) or pandas-udf.")
    ] = "reflect",
    column: Annotated[str | None, typer.Option(help="Parquet column holding the ids.")] = None,
    verify: Annotated[
        int, typer.Option(help="Ids to check against the plain-Python placement.")
    ] = 10_000,
    top: Annotated[int, typer.Option(help="Busiest partitions to list.")] = 10,
    master: MasterOpt = None,
    conf: ConfOpt = None,
) -> None:
    """Which __consumer_offsets partition and broker coordinates each group; load and skew.

    Example: groupsim placement ids.txt --partitions 50 --brokers 6
    """
    from pipeline.placement import METHODS, place, read_ids, render_markdown

    if method not in METHODS:
        raise typer.BadParameter(f"--method must be one of {', '.join(METHODS)}")
    if partitions <= 0 or brokers <= 0:
        raise typer.BadParameter("--partitions and --brokers must be positive")
    if "://" not in ids_file and not Path(ids_file).exists():
        _err(f"groupsim: no such file: {ids_file}")
        raise typer.Exit(EXIT_INVALID)
    spark = _session(master, conf, "groupsim-placement", light_jvm=method != "reflect")
    from pipeline.sweep import SparkProgress

    try:
        with _progress_reporter("placement") as show, SparkProgress(spark, show):
            report = place(
                spark,
                read_ids(spark, ids_file, column),
                num_partitions=partitions,
                brokers=brokers,
                method=method,
                verify=verify,
            )
    except ValueError as exc:
        _err(f"groupsim: {exc}")
        raise typer.Exit(EXIT_INVALID) from None
    print(render_markdown(report, top=top), end="")
    if report.mismatches:
        _err(f"groupsim: {report.mismatches} ids disagree with coordinator.placement.partition_for")
        raise typer.Exit(EXIT_FAILED)


def log_report(
    logs: Annotated[list[str], typer.Argument(help="`groupsim run --log` JSON-lines files.")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Also write report.md and Parquet here.")
    ] = None,
    master: MasterOpt = None,
    conf: ConfOpt = None,
) -> None:
    """Per group: rebalance durations, time in each state, errors by code, members without partitions.

    Example: groupsim run lesson.yaml --log run.jsonl && groupsim log-report run.jsonl
    """
    missing = [p for p in logs if "://" not in p and not Path(p).exists()]
    if missing:
        _err(f"groupsim: no such log file: {', '.join(missing)}")
        raise typer.Exit(EXIT_INVALID)
    spark = _session(master, conf, "groupsim-log-report")
    from pipeline.logs import analyse_logs, render_markdown, write_outputs
    from pipeline.sweep import SparkProgress

    with _progress_reporter("log-report") as show, SparkProgress(spark, show):
        analysis = analyse_logs(spark, logs)
        text = render_markdown(analysis)
    print(text, end="")
    if output is not None:
        write_outputs(analysis, output, text)


def register(app: typer.Typer) -> None:
    """Add the pipeline's commands to the ``groupsim`` app (called by ``scenarios.cli``)."""
    app.command("sweep")(sweep)
    app.command("sweep-report")(sweep_report)
    app.command("placement")(placement)
    app.command("log-report")(log_report)
