"""One local Spark session for every pipeline test (a JVM costs ~7 s to start).

Every Spark test module sets ``pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]``
so that under ``pytest -n 2 --dist loadgroup`` they all run in one xdist worker, one JVM.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from pipeline.session import build_session

    session = build_session("local[2]", app_name="groupsim-tests", test_profile=True)
    yield session
    session.stop()
