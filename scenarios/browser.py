"""A headless Chromium for looking at groupsim's pages: the browser tests and the docs' screenshots.

Selenium drives Debian's ``chromium`` through the system ``chromedriver`` (both from apt; the
Makefile's scripts/ensure-browser.sh installs them). Nothing is downloaded: the driver's path is
given, so Selenium Manager is never asked to fetch a browser or a driver.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
CHROMEDRIVER = "chromedriver"


def find_browser() -> tuple[str, str] | None:
    """(browser, driver) paths, or None when either is missing."""
    browser = next((p for p in map(shutil.which, CHROMIUM) if p), None)
    driver = shutil.which(CHROMEDRIVER) or (
        "/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None
    )
    return (browser, driver) if browser and driver else None


def start_browser(width: int = 1400, height: int = 1000) -> Any:
    """A headless Chromium WebDriver; raises RuntimeError naming what is missing."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = find_browser()
    if found is None:
        raise RuntimeError(
            "chromium and chromedriver are needed (apt-get install chromium chromium-driver; "
            "`make setup` does it)"
        )
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager go online
    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-extensions",
        "--no-first-run",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(executable_path=found[1]), options=options)
