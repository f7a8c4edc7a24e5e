"""One participant's job: `healthetl run` into participants/<id>/ and a status file for the merge.

A bad export (healthetl exit 65, or 66 when it vanished, or an export path that names a FIFO, a
socket or a device, which healthetl is not even started on) is a result, not a failure: the
status says `bad_input` with the exit code and a one-line message, the job succeeds, and the
merge leaves the participant out. So does a run stopped at its time limit (`timed_out`), which
the next run tries again. Anything else healthetl reports (64 bad pipeline, 73/74 cannot write,
75 locked, a signal) fails the job, so Snakemake retries it on the next run.
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
STOP_GRACE_SECONDS = 10  # between SIGTERM (healthetl removes its staging folder and lock) and SIGKILL


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--healthetl", required=True)
    parser.add_argument("--participant", required=True)
    parser.add_argument("--export", required=True)
    parser.add_argument("--out", required=True, help="participants/<id>")
    parser.add_argument("--status", required=True, help="the status file to write")
    parser.add_argument("--time-limit", type=float, required=True, help="seconds healthetl run may take")
    parser.add_argument("--tz", default="auto")
    parser.add_argument("--pipeline", action="append", default=[])
    parser.add_argument("--include-me", action="store_true")
    args = parser.parse_args(argv)

    signature = cohortlib.stat_signature(args.export)  # before the run: what the run will read
    status = {
        "participant": args.participant,
        "status": "ok",
        "exit_code": None,
        "message": None,
        "sha256": None,
        "stat": signature,
        "seconds": 0.0,
        "finished": None,
        "host": socket.gethostname(),
        "token": uuid.uuid4().hex,
    }
    kind = cohortlib.export_kind(args.export)
    if kind not in ("file", "folder", None):  # None: healthetl says what is missing (66)
        # Not started: healthetl would wait on a FIFO's open or read a device without end.
        status["status"] = "bad_input"
        status["message"] = (
            f"{args.export}: a {kind}, not an export (a .zip or .xml file, or an unpacked export folder)"
        )
        status["sha256"] = cohortlib.content_sha256(args.export)
        return finish(args.status, status)

    command = [args.healthetl, "run"]
    for pipeline in args.pipeline:
        command += ["--pipeline", pipeline]
    command += ["--out", args.out, "--tz", args.tz, "--quiet", args.export]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    started = time.monotonic()
    returncode, stdout, stderr = run_with_time_limit(command, args.time_limit)
    status["seconds"] = round(time.monotonic() - started, 3)
    sys.stdout.write(stdout)
    sys.stderr.write(stderr)
    status["exit_code"] = returncode

    if returncode is None:
        status["status"] = cohortlib.TIMED_OUT
        status["message"] = (
            f"healthetl run did not finish within its time limit of {args.time_limit:g} s and was stopped; "
            "the next run tries again (config.yaml, participant: time_limit_s_*)"
        )
        print(f"cohort: participant {args.participant}: {status['message']}", file=sys.stderr)
    elif returncode == 0:
        run = cohortlib.load_json(os.path.join(args.out, "run.json")) or {}
        # healthetl hashes a folder's main XML only; the workflow keys a folder on all of it.
        from_run = (run.get("input") or {}).get("sha256") if kind == "file" else None
        status["sha256"] = from_run or cohortlib.content_sha256(args.export)
        if not args.include_me and ME_FILE not in [o.get("path") for o in run.get("outputs", [])]:
            # healthetl carries over files a run does not rewrite: drop a birth date and sex
            # left behind by an earlier run that had the switch on.
            try:
                os.unlink(os.path.join(args.out, ME_FILE))
            except FileNotFoundError:
                pass
    elif returncode in BAD_INPUT_CODES:
        status["status"] = "bad_input"
        status["message"] = error_line(stderr) or BAD_INPUT_CODES[returncode]
        status["sha256"] = cohortlib.content_sha256(args.export)
    else:
        print(
            f"cohort: participant {args.participant}: healthetl exited with {returncode}; "
            "the job fails so that the next run retries it",
            file=sys.stderr,
        )
        return returncode if returncode > 0 else 1
    return finish(args.status, status)


def run_with_time_limit(command: list[str], seconds: float) -> tuple[int | None, str, str]:
    """Runs `command` for at most `seconds`; the exit code (None when it was stopped at the
    limit: SIGTERM, then SIGKILL after STOP_GRACE_SECONDS), standard output and error."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="backslashreplace"
    )
    try:
        stdout, stderr = process.communicate(timeout=seconds)
        return process.returncode, stdout, stderr
    except subprocess.TimeoutExpired:
        process.terminate()
        try:
            stdout, stderr = process.communicate(timeout=STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            try:
                stdout, stderr = process.communicate(timeout=STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:  # something it started still holds its output open
                process.wait()
                stdout, stderr = "", ""
        return None, stdout, stderr


def finish(path: str, status: dict) -> int:
    status["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    cohortlib.write_atomic(path, json.dumps(status, indent=1) + "\n")
    return 0


def error_line(stderr: str) -> str | None:
    for line in stderr.splitlines():
        if line.startswith("healthetl: error:"):
            return line[len("healthetl: error:") :].strip()
    return None


if __name__ == "__main__":
    sys.exit(main())
