#!/bin/sh
# Runs two healthetl binaries over every shipped pipeline × the sample export, every
# `healthetl sample --profile` (written by AFTER_BIN, one zip each) and the real fixtures, and
# diffs their output folders (run.json without its timings and memory figures).
# Usage: Tests/Tools/compare_outputs.sh BEFORE_BIN AFTER_BIN WORK_DIR [REAL_FIXTURES]
# Exit 0 when every output is the same; the differing cases are listed otherwise.
set -u
before=$1 after=$2 work=$3
real=${4:-${HEALTHETL_REAL_FIXTURES:-/work/shared/fixtures/real}}
repo=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work" && mkdir -p "$work"
inputs="$repo/SampleData/export.zip"
mkdir -p "$work/profiles"
for profile in $("$after" sample --help | sed -n 's/.*--profile NAME *Whose export: //p' | grep -o '[a-z0-9-]* (' | tr -d ' ('); do
  "$after" sample --profile "$profile" --zip --out "$work/profiles/$profile.zip" 2>/dev/null &&
    inputs="$inputs $work/profiles/$profile.zip"
done
if [ -d "$real" ]; then
  inputs="$inputs $(find "$real" -type f \( -name '*.zip' -o -iname '*.xml' \) ! -name '*cda*' | sort)"
fi
# run.json keys that measure the run rather than describe its outputs.
strip='walk(if type == "object" then with_entries(select(.key | test("seconds|Seconds|peak|Peak|memory|Memory|mbPerSecond|started|finished") | not)) else . end)'
differ=0 cases=0
for pipeline in "$repo"/Pipelines/*.json; do
  grep -q '"jobs"' "$pipeline" || continue
  for input in $inputs; do
    case_name=$(basename "$pipeline" .json)__$(echo "$input" | sed 's|.*/real/||; s|.*/profiles/|profile-|; s|/|_|g')
    for side in before after; do
      bin=$before; [ $side = after ] && bin=$after
      out="$work/$side/$case_name"
      mkdir -p "$work/$side-log"
      TZ=Europe/Berlin "$bin" run --quiet --pipeline "$pipeline" --out "$out" "$input" \
        >"$work/$side-log/$case_name.stdout" 2>"$work/$side-log/$case_name.stderr"
      echo $? >"$work/$side-log/$case_name.rc"
      if [ -f "$out/run.json" ]; then
        jq -S "$strip" "$out/run.json" >"$out/run.json.stable" && rm "$out/run.json"
      fi
    done
    cases=$((cases + 1))
    sed -i "s|$work/before|OUT|g; s|$work/after|OUT|g" "$work/before-log/$case_name.stderr" "$work/after-log/$case_name.stderr"
    # A run that fails writes no folder: then only its exit code and message are compared.
    if { [ -e "$work/before/$case_name" ] || [ -e "$work/after/$case_name" ]; } &&
      ! diff -r -q "$work/before/$case_name" "$work/after/$case_name" >/dev/null 2>&1 ||
      ! cmp -s "$work/before-log/$case_name.rc" "$work/after-log/$case_name.rc" ||
      ! cmp -s "$work/before-log/$case_name.stderr" "$work/after-log/$case_name.stderr"; then
      echo "DIFFERS: $case_name"
      diff -r -q "$work/before/$case_name" "$work/after/$case_name" 2>&1 | sed 's/^/  /'
      differ=$((differ + 1))
    fi
  done
done
echo "$cases cases, $differ differ"
[ $differ -eq 0 ]
