#!/usr/bin/env bash
# Builds and runs the libFuzzer harnesses of Tests/Fuzz/Harnesses (called by `make fuzz` and
# `make fuzz-smoke`; see Tests/Fuzz/README.md).
#
#   fuzz.sh build
#   fuzz.sh fuzz  SECONDS [HARNESS...]   fuzz each for SECONDS; new inputs kept in .build/fuzz-corpus
#   fuzz.sh smoke SECONDS [HARNESS...]   replay the committed corpus, fuzz briefly; non-zero on a crash
set -uo pipefail

SWIFT=${SWIFT:-swift}
BUILD=.build/fuzz
BIN=$BUILD/debug
ALL="xml run zip pipeline codes state gpx answer ecg lineprotocol fhir"
KNOWN=Tests/Fuzz/known-crashes.txt
# Foundation leaks a buffer when it reads an empty file (FileManager.contents(atPath:)); the
# harnesses also set this themselves when run by hand.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/Tests/Fuzz/lsan-suppressions.txt:print_suppressions=0}
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no}

binary() {
  case $1 in
    xml) echo FuzzXML ;; run) echo FuzzRun ;; zip) echo FuzzZip ;;
    pipeline) echo FuzzPipeline ;; codes) echo FuzzCodes ;; state) echo FuzzState ;;
    gpx) echo FuzzGPX ;; answer) echo FuzzAnswer ;; ecg) echo FuzzECG ;;
    lineprotocol) echo FuzzLineProtocol ;; fhir) echo FuzzFHIR ;;
    *) echo "unknown harness '$1' (known: $ALL)" >&2; exit 2 ;;
  esac
}

# libFuzzer flags per harness: a dictionary, the input size limit and the per-input time limit.
flags() {
  case $1 in
    xml | run) echo "-dict=Tests/Fuzz/Dictionaries/xml.dict -max_len=20000 -timeout=20" ;;
    zip) echo "-dict=Tests/Fuzz/Dictionaries/zip.dict -max_len=8192 -timeout=20" ;;
    gpx) echo "-dict=Tests/Fuzz/Dictionaries/gpx.dict -max_len=8192 -timeout=10" ;;
    ecg) echo "-dict=Tests/Fuzz/Dictionaries/ecg.dict -max_len=8192 -timeout=10" ;;
    lineprotocol) echo "-dict=Tests/Fuzz/Dictionaries/lineprotocol.dict -max_len=8192 -timeout=10" ;;
    *) echo "-dict=Tests/Fuzz/Dictionaries/json.dict -max_len=4096 -timeout=10" ;;
  esac
}

known_crashes() { # harness → its open crash inputs, one file name a line
  [ -f "$KNOWN" ] || return 0
  sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$KNOWN" | awk -F/ -v h="$1" 'NF == 2 && $1 == h { print $2 }'
}

# The committed corpus of a harness less its known open crashes (those would stop every run at
# its start), as a read-only seed folder.
seeds() {
  local harness=$1 dir=.build/fuzz-seeds/$1
  rm -rf "$dir" && mkdir -p "$dir"
  cp Tests/Fuzz/Corpus/"$harness"/* "$dir"/ 2>/dev/null
  for name in $(known_crashes "$harness"); do rm -f "$dir/$name"; done
  echo "$dir"
}

build() {
  echo "Building the fuzz harnesses (-sanitize=fuzzer,address)…"
  local started=$SECONDS
  # The debug configuration keeps the dynamic exclusivity checks (release turns them off); -O
  # nearly doubles executions per second and drops nothing else HealthETL relies on (no asserts).
  $SWIFT build --package-path Tests/Fuzz/Harnesses --scratch-path "$BUILD" -c debug -Xswiftc -O \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld || exit 1
  echo "Built in $((SECONDS - started)) s"
}

fuzz() {
  local seconds=$1 status=0 summary=""
  shift
  for harness in ${@:-$ALL}; do
    local exe; exe=$BIN/$(binary "$harness") || exit 2
    local corpus=.build/fuzz-corpus/$harness artifacts=.build/fuzz-artifacts/$harness
    local log=.build/fuzz-logs/$harness.log
    mkdir -p "$corpus" "$artifacts" .build/fuzz-logs
    local before; before=$(ls "$artifacts" | wc -l)
    echo "== $harness: fuzzing for $seconds s (log: $log)"
    # Fork mode with crashes ignored: one crash does not end the harness's time box; every crash,
    # timeout and out-of-memory input is still written to $artifacts.
    "$exe" "$corpus" "$(seeds "$harness")" $(flags "$harness") -max_total_time="$seconds" \
      -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
      -artifact_prefix="$artifacts/" >"$log" 2>&1
    local last; last=$(grep -E '^#[0-9]+: cov' "$log" | tail -1)
    local execs; execs=$(echo "$last" | sed -E 's/^#([0-9]+):.*/\1/')
    # Fork mode runs a little past the time box: rates use the time libFuzzer reports.
    local took; took=$(echo "$last" | sed -E 's/.* time: ([0-9]+)s.*/\1/')
    local found=$(($(ls "$artifacts" | wc -l) - before))
    local line
    took=${took:-$seconds}
    line=$(printf '%-9s %10s executions in %4s s (%s exec/s), corpus %s files, %s new crash inputs' \
      "$harness" "${execs:-0}" "$took" "$(( ${execs:-0} / (took > 0 ? took : 1) ))" \
      "$(ls "$corpus" | wc -l)" "$found")
    echo "$line"
    summary+="$line"$'\n'
    if [ "$found" -gt 0 ]; then
      status=1
      ls -t "$artifacts" | head -n "$found" | sed "s|^|   $artifacts/|"
    fi
  done
  echo
  echo "$summary"
  [ $status = 0 ] || echo "Crash inputs are in .build/fuzz-artifacts/; reproduce one with: $BIN/Fuzz<Harness> <file>"
  exit $status
}

# What a failed run's log says, enough to act on from a CI transcript alone: the sanitizer's
# verdict, the first frames of its first stack, and the input itself (base64) when it is small.
explain_failure() {
  local log=$1
  grep -E 'ERROR: |SUMMARY: |Fatal error|Test unit written' "$log" | head -5 | sed 's/^/     /'
  grep -E '^ +#[0-9]+ 0x' "$log" | head -12 | sed 's/^ */     /'
  local unit; unit=$(grep -o 'Test unit written to [^ ]*' "$log" | tail -1 | cut -d' ' -f5)
  if [ -n "$unit" ] && [ -f "$unit" ] && [ "$(stat -c %s "$unit")" -le 4096 ]; then
    echo "     input (base64): $(base64 -w0 "$unit")"
  fi
}

smoke() {
  local seconds=$1 status=0
  shift
  for harness in ${@:-$ALL}; do
    local exe; exe=$BIN/$(binary "$harness") || exit 2
    local artifacts=.build/fuzz-artifacts/$harness log=.build/fuzz-logs/$harness-smoke.log
    mkdir -p "$artifacts" .build/fuzz-logs
    # An open crash that no longer crashes must leave the list, so that its input is replayed.
    for name in $(known_crashes "$harness"); do
      if "$exe" $(flags "$harness") -runs=1 "Tests/Fuzz/Corpus/$harness/$name" >/dev/null 2>&1; then
        echo "FAIL $harness: $name no longer crashes; delete its line from $KNOWN"
        status=1
      else
        echo "open $harness/$name (listed in $KNOWN)"
      fi
    done
    local scratch=.build/fuzz-smoke/$harness seed; seed=$(seeds "$harness")
    # 1. Every committed input once (the regression inputs among them): anything but a clean
    #    return, a slow input included, fails.
    if ! "$exe" $(flags "$harness") -runs=0 -artifact_prefix="$artifacts/" "$seed" >"$log" 2>&1; then
      echo "FAIL $harness: a committed input fails; see $log"
      explain_failure "$log"
      status=1
      continue
    fi
    # 2. Mutations for the rest of the time, into a scratch corpus. A crash, a trap, a sanitizer
    #    report or running out of memory fails; a slow input is reported but does not fail, since
    #    time limits on a shared CI machine are not exact.
    rm -rf "$scratch" && mkdir -p "$scratch"
    "$exe" "$scratch" "$seed" $(flags "$harness") -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$artifacts/" >>"$log" 2>&1
    local executed; executed=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    if grep -q 'ERROR: libFuzzer: timeout' "$log" && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer: (deadly|out-of-memory|malloc))' "$log"; then
      echo "slow $harness: an input ran past the time limit (not a failure): $(grep -o 'Test unit written to .*' "$log" | tail -1)"
    elif grep -qE '^==[0-9]+==ERROR|ERROR: libFuzzer|Fatal error' "$log"; then
      echo "FAIL $harness: see $log"
      explain_failure "$log"
      status=1
    else
      echo "ok   $harness: $executed executions"
    fi
  done
  exit $status
}

command=${1:-}
shift || true
case $command in
  build) build ;;
  fuzz) fuzz "$@" ;;
  smoke) smoke "$@" ;;
  *) sed -n '2,8p' "$0"; exit 2 ;;
esac
