"""One headless Chromium for every browser test (it costs a few seconds to start).

Every browser test module sets ``pytestmark = pytest.mark.xdist_group("browser")`` so that under
``pytest -n 2 --dist loadgroup`` they all run in one xdist worker, with one browser. Without
chromium/chromedriver the tests are skipped, except under CI (``CI`` set), where `make test` has
installed them (scripts/ensure-browser.sh) and a missing browser is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scenarios.browser import find_browser, start_browser


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if find_browser() is None:
        message = "chromium and chromedriver are not installed (make setup installs them)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    driver = start_browser(1400, 1000)
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for the pages the tests write (one per lesson, written once)."""
    return tmp_path_factory.mktemp("pages")
