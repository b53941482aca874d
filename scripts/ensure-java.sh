#!/usr/bin/env bash
# Spark 4 needs Java 17 or newer. Install a headless JRE with apt when it is missing and we can;
# otherwise say exactly what to do.
set -euo pipefail
need=17
have=0
if command -v java >/dev/null 2>&1; then
  have=$(java -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1") ? v[2] : v[1]; exit}')
fi
if [ "${have:-0}" -ge "$need" ] 2>/dev/null; then
  exit 0
fi
echo "groupsim: Java $need+ is needed by the Spark pipeline (found: ${have:-none})." >&2
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "groupsim: installing openjdk-$need-jre-headless with apt-get ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "openjdk-$need-jre-headless" >/dev/null
  java -version 2>&1 | head -1 >&2
  exit 0
fi
cat >&2 <<MSG
groupsim: please install Java $need (a headless JRE is enough), for example:
    sudo apt-get install openjdk-$need-jre-headless     # Debian/Ubuntu
    brew install openjdk@$need                          # macOS
then run the make target again.
MSG
exit 1
