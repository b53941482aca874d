#!/bin/sh
# Re-records tests/coordinator/data/hashmap_vectors.txt from the JVM on the path (OpenJDK 17, the
# version the docs cite): compiles HashMapVectors.java into a temporary directory and runs it, on
# its own seeded sequences and on cases.txt (collections of Kafka's JMH grid where buckets collide).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$HERE/../../tests/coordinator/data/hashmap_vectors.txt"
command -v javac >/dev/null || { echo "no javac (install openjdk-17-jdk-headless)" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
javac -d "$TMP" "$HERE/HashMapVectors.java"
{
  echo "# java.util.HashMap iteration orders, recorded by tools/hashmap-vectors/record.sh"
  java -version 2>&1 | head -1 | sed 's/^/# /'
  java -cp "$TMP" HashMapVectors "$HERE/cases.txt"
} > "$OUT"
echo "wrote $OUT ($(wc -c < "$OUT") bytes)"
