"""One participant's job: `healthetl run` into participants/<id>/ and a status file for the merge.

A bad export (healthetl exit 65, or 66 when it vanished) is a result, not a failure: the status
says `bad_input` with the exit code and healthetl's one-line message, the job succeeds, and the
merge leaves the participant out. Anything else healthetl reports (64 bad pipeline, 73/74 cannot
write, 75 locked, a signal) fails the job, so Snakemake retries it on the next run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import socket
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cohortlib  # noqa: E402

BAD_INPUT_CODES = {65: "bad input data", 66: "input not found"}
ME_FILE = "elements/Me.csv"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--healthetl", required=True)
    parser.add_argument("--participant", required=True)
    parser.add_argument("--export", required=True)
    parser.add_argument("--out", required=True, help="participants/<id>")
    parser.add_argument("--status", required=True, help="the status file to write")
    parser.add_argument("--tz", default="auto")
    parser.add_argument("--pipeline", action="append", default=[])
    parser.add_argument("--include-me", action="store_true")
    args = parser.parse_args(argv)

    signature = cohortlib.stat_signature(args.export)  # before the run: what the run will read
    command = [args.healthetl, "run"]
    for pipeline in args.pipeline:
        command += ["--pipeline", pipeline]
    command += ["--out", args.out, "--tz", args.tz, "--quiet", args.export]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    started = time.monotonic()
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seconds = round(time.monotonic() - started, 3)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)

    status = {
        "participant": args.participant,
        "status": "ok",
        "exit_code": result.returncode,
        "message": None,
        "sha256": None,
        "stat": signature,
        "seconds": seconds,
        "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "token": uuid.uuid4().hex,
    }
    if result.returncode == 0:
        run = cohortlib.load_json(os.path.join(args.out, "run.json")) or {}
        status["sha256"] = (run.get("input") or {}).get("sha256") or cohortlib.content_sha256(args.export)
        if not args.include_me and ME_FILE not in [o.get("path") for o in run.get("outputs", [])]:
            # healthetl carries over files a run does not rewrite: drop a birth date and sex
            # left behind by an earlier run that had the switch on.
            try:
                os.unlink(os.path.join(args.out, ME_FILE))
            except FileNotFoundError:
                pass
    elif result.returncode in BAD_INPUT_CODES:
        status["status"] = "bad_input"
        status["message"] = error_line(result.stderr) or BAD_INPUT_CODES[result.returncode]
        status["sha256"] = cohortlib.content_sha256(args.export) if os.path.exists(args.export) else None
    else:
        print(
            f"cohort: participant {args.participant}: healthetl exited with {result.returncode}; "
            "the job fails so that the next run retries it",
            file=sys.stderr,
        )
        return result.returncode if result.returncode > 0 else 1
    cohortlib.write_atomic(args.status, json.dumps(status, indent=1) + "\n")
    return 0


def error_line(stderr: str) -> str | None:
    for line in stderr.splitlines():
        if line.startswith("healthetl: error:"):
            return line[len("healthetl: error:") :].strip()
    return None


if __name__ == "__main__":
    sys.exit(main())
