#!/bin/sh
# Benchmark driver for `make bench`: interleaves the libxml2 floor (xmlfloor) and HealthETL on
# the same file, three rounds, and reports the best of each with its ratio to the floor.
set -eu
: "${BIN:?}" "${FLOOR:?}" "${FILE:?}" "${OUTDIR:?}"
mb=$(awk "BEGIN { printf \"%.1f\", $(stat -c %s "$FILE") / 1e6 }")
echo "benchmark file: $FILE ($mb MB)"
best() { sort -n | head -1; }
floor_times=""; inspect_times=""; inspect_rss=""
for round in 1 2 3; do
  floor_times="$floor_times $("$FLOOR" "$FILE" | sed 's/.*"seconds": \([0-9.]*\).*/\1/')"
  t=$( { /usr/bin/time -f "%e %M" "$BIN" inspect --json "$FILE" > /dev/null; } 2>&1 | tail -1)
  inspect_times="$inspect_times ${t% *}"; inspect_rss="$inspect_rss ${t#* }"
done
floor=$(echo $floor_times | tr ' ' '\n' | best)
inspect=$(echo $inspect_times | tr ' ' '\n' | best)
rss=$(echo $inspect_rss | tr ' ' '\n' | sort -n | tail -1)
awk -v mb="$mb" -v f="$floor" -v i="$inspect" -v rss="$rss" 'BEGIN {
  printf "libxml2 floor   %7.1f MB/s  (%.2f s)\n", mb / f, f
  printf "inspect         %7.1f MB/s  (%.2f s)  ratio %.2f (target >= 0.80)  peak RSS %.0f MB (target < 100)\n",
    mb / i, i, f / i, rss / 1024 }'
