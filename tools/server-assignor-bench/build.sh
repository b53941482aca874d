#!/usr/bin/env bash
# Compiles Kafka's server-side assignors (group-coordinator at the commit docs/ cite) and our
# driver ServerAssignorBench.java with plain javac, into a cache directory outside the repository
# (Kafka's source and classes are never committed). Needs javac 17+, Debian's slf4j-api jar and a
# git mirror of apache/kafka. Prints the class directory on success.
#
#   KAFKA_GIT_DIR   bare mirror of apache/kafka   (default /work/.mirror/apache+kafka/repo)
#   KAFKA_COMMIT    commit to build               (default 1eb7644349cb07139d6a3c1ad1986979647cac99)
#   GROUPSIM_CACHE  cache root                    (default ~/.cache/groupsim)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
GIT_DIR=${KAFKA_GIT_DIR:-/work/.mirror/apache+kafka/repo}
COMMIT=${KAFKA_COMMIT:-1eb7644349cb07139d6a3c1ad1986979647cac99}
CACHE=${GROUPSIM_CACHE:-$HOME/.cache/groupsim}/kafka-server-assignors/${COMMIT:0:12}
SLF4J=/usr/share/java/slf4j-api.jar
command -v javac >/dev/null || { echo "no javac (install openjdk-17-jdk-headless)" >&2; exit 1; }
[ -f "$SLF4J" ] || { echo "no $SLF4J (install libslf4j-java)" >&2; exit 1; }
git --git-dir="$GIT_DIR" cat-file -e "$COMMIT^{commit}" 2>/dev/null \
  || { echo "no apache/kafka mirror with $COMMIT at $GIT_DIR (set KAFKA_GIT_DIR)" >&2; exit 1; }
STAMP="$CACHE/classes/.built-$(sha256sum "$HERE/ServerAssignorBench.java" | cut -c1-16)"
if [ ! -f "$STAMP" ]; then
  rm -rf "$CACHE" && mkdir -p "$CACHE/src" "$CACHE/classes"
  git --git-dir="$GIT_DIR" archive "$COMMIT" clients/src/main/java server-common/src/main/java \
      group-coordinator/src/main/java group-coordinator/group-coordinator-api/src/main/java \
    | tar -x -C "$CACHE/src"
  S=$CACHE/src
  SP=$S/clients/src/main/java:$S/server-common/src/main/java:$S/group-coordinator/src/main/java
  SP=$SP:$S/group-coordinator/group-coordinator-api/src/main/java
  javac -nowarn -proc:none -implicit:class -encoding UTF-8 -d "$CACHE/classes" -cp "$SLF4J" \
    -sourcepath "$SP" "$HERE/ServerAssignorBench.java" 2>&1 | grep -v '^Note:' >&2 || true
  [ -f "$CACHE/classes/ServerAssignorBench.class" ] || { echo "javac failed" >&2; exit 1; }
  touch "$STAMP"
fi
echo "$CACHE/classes:$SLF4J:/usr/share/java/slf4j-nop.jar"
