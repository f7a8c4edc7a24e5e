#!/bin/sh
# Two healthetl builds on the same export, interleaved with the libxml2 floor, so a shared
# machine's slow moments fall on both alike: each round runs the floor, then the two builds'
# `run` (default pipeline) in alternating order, and prints wall and CPU (user + system) of each,
# their ratios to the floor, and the peak RSS and after-parse time from run.json.
# Usage: Tests/Tools/bench_pair.sh ROUNDS EXPORT BIN_A BIN_B [extra run options, e.g. --no-database]
# Compare medians over rounds, never one round. Each binary needs Pipelines/ beside it.
set -eu
rounds=$1 export=$2 a=$3 b=$4
shift 4
repo=$(cd "$(dirname "$0")/../.." && pwd)
floor=$repo/.build/release/xmlfloor
[ -x "$floor" ] || { echo "build the floor first: swift build -c release --product xmlfloor" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
timed() { /usr/bin/time -f "%e %U %S" "$@" 2>&1 >/dev/null | tail -1; }
side() {
  name=$1 bin=$2
  shift 2
  rm -rf "${work:?}/$name"
  times=$(timed "$bin" run --quiet "$@" --out "$work/$name" "$export")
  printf '%s %s\n' "$times" "$(jq -r '"\(.peakMemoryMB) \(.stageSeconds.load)"' "$work/$name/run.json")"
}
echo "round  floor wall cpu | A wall cpu peakMB load | B wall cpu peakMB load | A/floor B/floor"
i=1
while [ "$i" -le "$rounds" ]; do
  f=$(timed "$floor" "$export")
  if [ $((i % 2)) -eq 1 ]; then ra=$(side A "$a" "$@"); rb=$(side B "$b" "$@")
  else rb=$(side B "$b" "$@"); ra=$(side A "$a" "$@"); fi
  echo "$i $f $ra $rb" | awk '{ fw=$2; fc=$3+$4; aw=$5; ac=$6+$7; bw=$10; bc=$11+$12;
    printf "%-5d %6.2f %6.2f | %6.2f %6.2f %6.1f %6.2f | %6.2f %6.2f %6.1f %6.2f | %.3f %.3f\n",
      $1, fw, fc, aw, ac, $8, $9, bw, bc, $13, $14, fw/aw, fw/bw }'
  i=$((i + 1))
done
