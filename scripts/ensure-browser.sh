#!/usr/bin/env bash
# The browser tests (tests/browser) drive a headless Chromium with Selenium through the system
# chromedriver. Install Debian's chromium and chromium-driver with apt when they are missing and we
# can; otherwise say exactly what to do. Nothing is downloaded by Selenium itself.
set -euo pipefail
have() { command -v "$1" >/dev/null 2>&1; }
if (have chromium || have chromium-browser || have google-chrome) && have chromedriver; then
  exit 0
fi
echo "groupsim: a headless Chromium and its chromedriver are needed by the browser tests." >&2
if [ "$(id -u)" = "0" ] && have apt-get; then
  echo "groupsim: installing chromium and chromium-driver with apt-get ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium chromium-driver >/dev/null
  chromium --version 2>/dev/null | head -1 >&2 || true
  exit 0
fi
cat >&2 <<MSG
groupsim: please install Chromium and its driver, for example:
    sudo apt-get install chromium chromium-driver        # Debian/Ubuntu
    brew install --cask chromium && brew install chromedriver   # macOS
then run the make target again (without them the browser tests are skipped, except under CI).
MSG
exit 1
