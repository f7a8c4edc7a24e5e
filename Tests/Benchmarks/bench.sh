#!/bin/sh
# Benchmark driver for `make bench`. On the same file, in the same run, interleaved over three
# rounds: the libxml2 floor (xmlfloor: a SAX2 parse that does nothing per element), `inspect`,
# and `run` with the default pipeline. Reports the best wall time of each and its throughput as
# a ratio to the floor's, the least CPU time (user + system, all threads) of each as a multiple
# of the floor's, and peak RSS; then the default pipeline's peak RSS on a file a tenth the size,
# to show memory is (roughly) flat in the size of the export.
#
# CPU time is the steadier figure on a shared machine: other processes stretch the wall time of
# every program, but not the CPU time each one spends.
#
# The targets are reported (met / MISSED), never enforced: the exit status is that of the
# programs measured, so a slow or busy machine does not fail a build.
set -eu
: "${BIN:?}" "${FLOOR:?}" "${FILE:?}" "${SMALL:?}" "${OUTDIR:?}"
# The targets, written in README.md ("Speed and memory"): throughput of inspect and of the default
# pipeline as a fraction of the floor's, the pipeline's CPU time as a multiple of the floor's, the
# pipeline's and inspect's peak RSS.
target_inspect_ratio=0.85
target_run_ratio=0.85
target_run_cpu=1.9
target_run_peak_mb=150
target_inspect_peak_mb=100
mb() { awk "BEGIN { printf \"%.1f\", $(stat -c %s "$1") / 1e6 }"; }
# Runs a command with its output discarded; prints "wall cpu peak_kb" (cpu = user + system).
# A failing program fails the bench.
times=$(mktemp)
trap 'rm -f "$times"' EXIT
measure() {
  /usr/bin/time -o "$times" -f "%e %U %S %M" "$@" > /dev/null 2> /dev/null || { cat "$times" >&2; return 1; }
  tail -1 "$times" | awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }'
}
best() { tr ' ' '\n' | grep -v '^$' | sort -n | head -1; }
most() { tr ' ' '\n' | grep -v '^$' | sort -n | tail -1; }
field() { echo "$1" | cut -d' ' -f"$2"; }
size=$(mb "$FILE")
echo "benchmark file: $FILE ($size MB)"
floor=""; floor_cpu=""; inspect=""; inspect_cpu=""; inspect_rss=""; run=""; run_cpu=""; run_rss=""
for round in 1 2 3; do
  t=$(measure "$FLOOR" "$FILE")
  floor="$floor $(field "$t" 1)"; floor_cpu="$floor_cpu $(field "$t" 2)"
  t=$(measure "$BIN" inspect --json "$FILE")
  inspect="$inspect $(field "$t" 1)"; inspect_cpu="$inspect_cpu $(field "$t" 2)"
  inspect_rss="$inspect_rss $(field "$t" 3)"
  t=$(measure "$BIN" run --quiet --out "$OUTDIR" "$FILE")
  run="$run $(field "$t" 1)"; run_cpu="$run_cpu $(field "$t" 2)"; run_rss="$run_rss $(field "$t" 3)"
done
small_rss=$(field "$(measure "$BIN" run --quiet --out "$OUTDIR-small" "$SMALL")" 3)
awk -v mb="$size" -v f="$(echo $floor | best)" -v fc="$(echo $floor_cpu | best)" \
    -v i="$(echo $inspect | best)" -v ic="$(echo $inspect_cpu | best)" -v irss="$(echo $inspect_rss | most)" \
    -v r="$(echo $run | best)" -v rc="$(echo $run_cpu | best)" -v rrss="$(echo $run_rss | most)" \
    -v smb="$(mb "$SMALL")" -v srss="$small_rss" \
    -v t_ir="$target_inspect_ratio" -v t_rr="$target_run_ratio" -v t_rc="$target_run_cpu" -v t_rp="$target_run_peak_mb" -v t_ip="$target_inspect_peak_mb" '
  function verdict(ok) { if (!ok) missed++; return ok ? "met" : "MISSED" }
  BEGIN {
  printf "libxml2 floor      %7.1f MB/s  (%.2f s, CPU %.2f s)\n", mb / f, f, fc
  printf "inspect            %7.1f MB/s  (%.2f s, CPU %.2f s = %.2fx)  ratio %.2f (target >= %.2f: %s)  peak RSS %.0f MB (target < %d: %s)\n",
    mb / i, i, ic, ic / fc, f / i, t_ir, verdict(f / i >= t_ir), irss / 1024, t_ip, verdict(irss / 1024 < t_ip)
  printf "default pipeline   %7.1f MB/s  (%.2f s, CPU %.2f s)  ratio %.2f (target >= %.2f: %s)  peak RSS %.0f MB (target <= %d: %s)\n",
    mb / r, r, rc, f / r, t_rr, verdict(f / r >= t_rr), rrss / 1024, t_rp, verdict(rrss / 1024 <= t_rp)
  printf "default pipeline CPU %.2fx the floor'"'"'s (target <= %.1fx: %s)\n", rc / fc, t_rc, verdict(rc / fc <= t_rc)
  printf "default pipeline peak RSS: %.0f MB on %.0f MB of XML, %.0f MB on %.0f MB\n", srss / 1024, smb, rrss / 1024, mb
  printf "targets: %s\n", missed ? missed " missed (reported only; the bench does not fail on them)" : "all met" }'
