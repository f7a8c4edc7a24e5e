"""One participant: `healthetl run` into participants/<id>/, and the status the merge reads.

A bad export (healthetl exit 65, or 66 when it vanished, or an export path that names a FIFO, a
socket or a device, which healthetl is not even started on) is a result, not a failure: the
status says `bad_input` with the exit code and a one-line message, and the merge leaves the
participant out. So does a run stopped at its time limit (`timed_out`). Anything else healthetl
reports (64 bad pipeline, 73/74 cannot write, 75 locked, a signal) is no status at all: the job
(batch.py) fails after its other participants, and the next run tries again.
"""

from __future__ import annotations

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
# What the participants' runs write besides the pipelines' files, part of every participant's run
# key: outputs of a run without the database (an earlier workflow) cannot be typed by the merge.
OUTPUTS = "outputs=files+database"
STOP_GRACE_SECONDS = 10  # between SIGTERM (healthetl removes its staging folder and lock) and SIGKILL


def run(
    healthetl: str, pid: str, export: str, *, time_limit_s: float, tz: str, pipelines: list[str],
    include_me: bool, run_key: str, log,
) -> tuple[dict | None, int]:
    """Runs `healthetl run` for one participant into participants/<id> (OUT is the working
    folder), its output and messages going to `log`; the status to write, or None and the exit
    code when the run failed in a way that says nothing about the export."""
    out = os.path.join("participants", pid)
    signature = cohortlib.stat_signature(export)  # before the run: what the run will read
    status = {
        "participant": pid,
        "status": "ok",
        "exit_code": None,
        "message": None,
        "sha256": None,
        "stat": signature,
        "run_key": run_key,
        "seconds": 0.0,
        "finished": None,
        "host": socket.gethostname(),
        "token": uuid.uuid4().hex,
    }
    kind = cohortlib.export_kind(export)
    if kind not in ("file", "folder", None):  # None: healthetl says what is missing (66)
        # Not started: healthetl would wait on a FIFO's open or read a device without end.
        status["status"] = "bad_input"
        status["message"] = f"{export}: a {kind}, not an export (a .zip or .xml file, or an unpacked export folder)"
        status["sha256"] = cohortlib.content_sha256(export)
        return status, 0

    command = [healthetl, "run"]
    for pipeline in pipelines:
        command += ["--pipeline", pipeline]
    # health.sqlite is written: its `columns` table is where the merge takes the columns' types from.
    command += ["--out", out, "--tz", tz, "--quiet", export]
    os.makedirs("participants", exist_ok=True)
    started = time.monotonic()
    returncode, stdout, stderr = run_with_time_limit(command, time_limit_s)
    status["seconds"] = round(time.monotonic() - started, 3)
    log.write(stdout)
    log.write(stderr)
    status["exit_code"] = returncode

    if returncode is None:
        status["status"] = cohortlib.TIMED_OUT
        status["message"] = (
            f"healthetl run did not finish within its time limit of {time_limit_s:g} s and was stopped; "
            "the next run tries again (config.yaml, participant: time_limit_s_*)"
        )
    elif returncode == 0:
        run_json = cohortlib.load_json(os.path.join(out, "run.json")) or {}
        # healthetl hashes a folder's main XML only; the workflow keys a folder on all of it.
        from_run = (run_json.get("input") or {}).get("sha256") if kind == "file" else None
        status["sha256"] = from_run or cohortlib.content_sha256(export)
        if not include_me and ME_FILE not in [o.get("path") for o in run_json.get("outputs", [])]:
            # healthetl carries over files a run does not rewrite: drop a birth date and sex
            # left behind by an earlier run that had the switch on.
            try:
                os.unlink(os.path.join(out, ME_FILE))
            except FileNotFoundError:
                pass
    elif returncode in BAD_INPUT_CODES:
        status["status"] = "bad_input"
        status["message"] = error_line(stderr) or BAD_INPUT_CODES[returncode]
        status["sha256"] = cohortlib.content_sha256(export)
    else:
        return None, returncode if returncode > 0 else 1
    return status, 0


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


def error_line(stderr: str) -> str | None:
    for line in stderr.splitlines():
        if line.startswith("healthetl: error:"):
            return line[len("healthetl: error:") :].strip()
    return None

