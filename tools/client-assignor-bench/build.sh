#!/usr/bin/env bash
# Compiles Kafka's client assignors (clients at the commit docs/ cite) and our driver
# ClientAssignorBench.java with plain javac, into a cache directory outside the repository
# (Kafka's source and classes are never committed). Needs javac 17+, Debian's slf4j-api jar and a
# git mirror of apache/kafka, and the message classes Kafka generates (the clients module does not
# compile without them): the generated/ directory of a Kafka oracle build (docs/oracle.md,
# ../shared/kafka-oracle/README.md). Prints the class path on success.
#
#   KAFKA_GENERATED the oracle build's generated/ dir (default /tmp/kafka-oracle-build/generated)
#   KAFKA_GIT_DIR   bare mirror of apache/kafka   (default /work/.mirror/apache+kafka/repo)
#   KAFKA_COMMIT    commit to build               (default 1eb7644349cb07139d6a3c1ad1986979647cac99)
#   GROUPSIM_CACHE  cache root                    (default ~/.cache/groupsim)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
GIT_DIR=${KAFKA_GIT_DIR:-/work/.mirror/apache+kafka/repo}
COMMIT=${KAFKA_COMMIT:-1eb7644349cb07139d6a3c1ad1986979647cac99}
CACHE=${GROUPSIM_CACHE:-$HOME/.cache/groupsim}/kafka-client-assignors/${COMMIT:0:12}
SLF4J=/usr/share/java/slf4j-api.jar
GENERATED=${KAFKA_GENERATED:-/tmp/kafka-oracle-build/generated}
J=/usr/share/java
JARS=$SLF4J:$J/lz4-java.jar:$J/snappy-java.jar:$J/zstd-jni.jar:$J/jackson-databind.jar:$J/jackson-core.jar:$J/jackson-annotations.jar
[ -d "$GENERATED/clients" ] || { echo "no generated Kafka messages at $GENERATED (build the oracle, set KAFKA_GENERATED)" >&2; exit 1; }
command -v javac >/dev/null || { echo "no javac (install openjdk-17-jdk-headless)" >&2; exit 1; }
[ -f "$SLF4J" ] || { echo "no $SLF4J (install libslf4j-java)" >&2; exit 1; }
git --git-dir="$GIT_DIR" cat-file -e "$COMMIT^{commit}" 2>/dev/null \
  || { echo "no apache/kafka mirror with $COMMIT at $GIT_DIR (set KAFKA_GIT_DIR)" >&2; exit 1; }
STAMP="$CACHE/classes/.built-$(sha256sum "$HERE/ClientAssignorBench.java" | cut -c1-16)"
if [ ! -f "$STAMP" ] && [ -f "$CACHE/classes/.kafka-built" ]; then
  # Kafka's classes are there: only the driver changed
  javac -nowarn -proc:none -implicit:none -encoding UTF-8 -d "$CACHE/classes" \
    -cp "$CACHE/classes:$JARS" "$HERE/ClientAssignorBench.java" 2>&1 | grep -v '^Note:' >&2 || true
  rm -f "$CACHE"/classes/.built-* && touch "$STAMP"
fi
if [ ! -f "$STAMP" ]; then
  rm -rf "$CACHE" && mkdir -p "$CACHE/src" "$CACHE/classes"
  git --git-dir="$GIT_DIR" archive "$COMMIT" clients/src/main/java | tar -x -C "$CACHE/src"
  javac -nowarn -proc:none -implicit:class -encoding UTF-8 -d "$CACHE/classes" -cp "$JARS" \
    -sourcepath "$HERE/../kafka-oracle/stubs:$CACHE/src/clients/src/main/java:$GENERATED/clients" "$HERE/ClientAssignorBench.java" 2>&1 \
    | grep -v '^Note:' >&2 || true
  [ -f "$CACHE/classes/ClientAssignorBench.class" ] || { echo "javac failed" >&2; exit 1; }
  touch "$STAMP" "$CACHE/classes/.kafka-built"
fi
echo "$CACHE/classes:$JARS:$J/slf4j-nop.jar"
