"""A file for ``spark-submit`` (it needs a script, not a console entry point).

    spark-submit --master spark://host:7077 --py-files dist/groupsim-py.zip \\
        pipeline/spark_entry.py sweep my-sweep.yaml --out hdfs:///sweeps/run1

runs ``groupsim sweep ...`` as the Spark driver: no ``--master`` is passed on, so spark-submit's
own master, deploy mode and confs apply. ``python pipeline/spark_entry.py --build-zip DIR`` writes
``DIR/groupsim-py.zip`` (the packages for ``--py-files``; a wheel does not work there).
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    if argv[:1] == ["--build-zip"]:
        from pipeline.session import package_zip

        print(package_zip(argv[1] if len(argv) > 1 else "dist"))
        return 0
    from scenarios.cli import app

    app(args=argv, prog_name="groupsim")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
