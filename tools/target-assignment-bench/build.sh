#!/usr/bin/env bash
# Compiles our TargetAssignmentBench.java against a built Kafka oracle (Kafka's group coordinator
# at the commit docs/ cite, with its generated message classes and the metadata image, built with
# plain javac by ../shared/kafka-oracle/BUILD.sh, ~2 min; see docs/oracle.md). Kafka's
# TargetAssignmentBuilder needs those generated records and TopicsImage, which the plain-source
# build of tools/server-assignor-bench does not have. Nothing from Kafka is committed. Prints the
# classpath on success.
#
#   KAFKA_ORACLE_DIR  an oracle build (classes/, runtime-classpath.txt)  (default /tmp/k848coord-oracle)
#   GROUPSIM_CACHE    cache root                                         (default ~/.cache/groupsim)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ORACLE=${KAFKA_ORACLE_DIR:-/tmp/k848coord-oracle}
OUT=${GROUPSIM_CACHE:-$HOME/.cache/groupsim}/target-assignment-bench
command -v javac >/dev/null || { echo "no javac (install openjdk-17-jdk-headless)" >&2; exit 1; }
[ -d "$ORACLE/classes/org/apache/kafka/coordinator/group/modern" ] && [ -f "$ORACLE/runtime-classpath.txt" ] \
  || { echo "no Kafka oracle build at $ORACLE (build one with ../shared/kafka-oracle/BUILD.sh; set KAFKA_ORACLE_DIR)" >&2; exit 1; }
CP="$ORACLE/classes:$(cat "$ORACLE/runtime-classpath.txt")"
STAMP="$OUT/.built-$(sha256sum "$HERE/TargetAssignmentBench.java" | cut -c1-16)"
if [ ! -f "$STAMP" ]; then
  rm -rf "$OUT" && mkdir -p "$OUT"
  javac -nowarn -proc:none -encoding UTF-8 -d "$OUT" -cp "$CP" "$HERE/TargetAssignmentBench.java" 2>&1 \
    | grep -v '^Note:' >&2 || true
  [ -f "$OUT/TargetAssignmentBench.class" ] || { echo "javac failed" >&2; exit 1; }
  touch "$STAMP"
fi
echo "$OUT:$CP"
