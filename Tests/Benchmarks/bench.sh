#!/bin/sh
# Benchmark driver for `make bench`. On the same file, in the same run, interleaved over three
# rounds: the libxml2 floor (xmlfloor: a SAX2 parse that does nothing per element), `inspect`,
# and `run` with the default pipeline. Reports the best time of each, its ratio to the floor and
# peak RSS; then the default pipeline's peak RSS on a file a tenth the size, to show memory is
# (roughly) flat in the size of the export.
set -eu
: "${BIN:?}" "${FLOOR:?}" "${FILE:?}" "${SMALL:?}" "${OUTDIR:?}"
mb() { awk "BEGIN { printf \"%.1f\", $(stat -c %s "$1") / 1e6 }"; }
timed() { { /usr/bin/time -f "%e %M" "$@" > /dev/null 2> /dev/null; } 2>&1 | tail -1; }
best() { tr ' ' '\n' | grep -v '^$' | sort -n | head -1; }
most() { tr ' ' '\n' | grep -v '^$' | sort -n | tail -1; }
size=$(mb "$FILE")
echo "benchmark file: $FILE ($size MB)"
floor=""; inspect=""; inspect_rss=""; run=""; run_rss=""
for round in 1 2 3; do
  floor="$floor $("$FLOOR" "$FILE" | sed 's/.*"seconds": \([0-9.]*\).*/\1/')"
  t=$( { /usr/bin/time -f "%e %M" "$BIN" inspect --json "$FILE" > /dev/null; } 2>&1 | tail -1)
  inspect="$inspect ${t% *}"; inspect_rss="$inspect_rss ${t#* }"
  t=$( { /usr/bin/time -f "%e %M" "$BIN" run --quiet --out "$OUTDIR" "$FILE" > /dev/null; } 2>&1 | tail -1)
  run="$run ${t% *}"; run_rss="$run_rss ${t#* }"
done
t=$( { /usr/bin/time -f "%e %M" "$BIN" run --quiet --out "$OUTDIR-small" "$SMALL" > /dev/null; } 2>&1 | tail -1)
small_rss=${t#* }
awk -v mb="$size" -v f="$(echo $floor | best)" -v i="$(echo $inspect | best)" -v irss="$(echo $inspect_rss | most)" \
    -v r="$(echo $run | best)" -v rrss="$(echo $run_rss | most)" -v smb="$(mb "$SMALL")" -v srss="$small_rss" 'BEGIN {
  printf "libxml2 floor      %7.1f MB/s  (%.2f s)\n", mb / f, f
  printf "inspect            %7.1f MB/s  (%.2f s)  ratio %.2f (target >= 0.80)  peak RSS %.0f MB (target < 100)\n",
    mb / i, i, f / i, irss / 1024
  printf "default pipeline   %7.1f MB/s  (%.2f s)  ratio %.2f (target >= 0.60)  peak RSS %.0f MB (target < 300)\n",
    mb / r, r, f / r, rrss / 1024
  printf "default pipeline peak RSS: %.0f MB on %.0f MB of XML, %.0f MB on %.0f MB\n", srss / 1024, smb, rrss / 1024, mb }'
