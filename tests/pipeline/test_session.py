"""Session building decisions that need no JVM: Java checks, masters, the code zip."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from pipeline import session
from pipeline.session import SparkUnavailableError, build_session, check_java, is_local, package_zip


def test_missing_java_is_one_clear_sentence(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    with pytest.raises(SparkUnavailableError, match=r"Java was not found .* Java 17\+"):
        check_java()
    with pytest.raises(SparkUnavailableError, match="Java was not found"):
        build_session("local[1]")


def test_old_java_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "java_version", lambda: 11)
    with pytest.raises(SparkUnavailableError, match="Java 11 found, but Spark 4 needs Java 17"):
        check_java()


def test_local_masters() -> None:
    assert is_local("local[2]") and is_local("local[*]") and is_local("local")
    assert not is_local("spark://10.0.0.1:7077") and not is_local("yarn")


def test_spark_connect_without_the_client_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import builtins

    real_import = builtins.__import__

    def no_grpc(name: str, *args: object, **kwargs: object) -> object:
        if name == "grpc":
            raise ImportError("No module named 'grpc'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_grpc)
    with pytest.raises(SparkUnavailableError, match=r"pyspark\[connect\]==4.3.0"):
        build_session("sc://127.0.0.1:15002")


def test_package_zip_holds_every_package(tmp_path: Path) -> None:
    path = package_zip(tmp_path)
    names = set(zipfile.ZipFile(path).namelist())
    for module in ("coordinator/placement.py", "scenarios/runner.py", "pipeline/runrow.py"):
        assert module in names
    assert not any("__pycache__" in n for n in names)
