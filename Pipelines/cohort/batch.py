"""One job of the cohort workflow: a group of participants, one `healthetl run` after another.

A job is one Slurm job (or one local job) for up to `participants_per_job` participants, so the
cost of starting a job — Snakemake's own start inside it, above all — is paid once per group,
not once per participant. Its plan, `.cohort/plan/<job>.json`, lists the participants with
their exports and time limits; Snakemake tracks only the job's `.done` file, and each
participant's status file is written here as soon as that participant is finished.

Tries. A participant is tried at most 1 + `retries` times in one run of the workflow:
- a `healthetl run` stopped at its time limit is tried again at once, in this job;
- a job that was stopped while running a participant (scancel, a node failure, Slurm's time
  limit) is submitted again by Snakemake (its `--retries`); the new job sees from
  `.cohort/attempts/<id>.json` that the participant was started before and not finished, counts
  that try, and skips the participants it finished.
After the last try the participant's status is `timed_out` or `cancelled`: left out of the merge
like a bad export, and tried again by the next run. The other participants of the job go on.

A participant whose run died of a signal it was not asked to stop by (SIGKILL from the
out-of-memory killer, a crash) is `failed`, a result like a bad export (participant.py). One
whose run failed for another reason (healthetl exit 64, 73, 74, 75, SIGTERM) gets no status: the job finishes the others and then fails, so the merge waits for the next run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cohortlib  # noqa: E402
import participant  # noqa: E402

ATTEMPTS_DIR = os.path.join(cohortlib.STATE_DIR, "attempts")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--plan", required=True, help=".cohort/plan/<job>.json")
    parser.add_argument("--done", required=True, help="the file Snakemake tracks for this job")
    args = parser.parse_args(argv)
    plan = cohortlib.load_json(args.plan)
    failed = []
    results = {}
    for member in plan["participants"]:
        pid = member["participant"]
        outcome = run_member(plan, member)
        results[pid] = outcome
        if outcome.startswith("failed: "):  # the job's failure, not the status `failed` (a result)
            failed.append(pid)
        print(f"cohort: participant {pid}: {outcome}", file=sys.stderr, flush=True)
    if failed:
        print(
            f"cohort: job {plan['job']}: {len(failed)} participant(s) failed ({', '.join(failed)}); "
            "the others are finished, and the next run tries these again",
            file=sys.stderr,
        )
        return 1
    cohortlib.write_atomic(args.done, json.dumps({"job": plan["job"], "participants": results}, indent=1) + "\n")
    return 0


def run_member(plan: dict, member: dict) -> str:
    pid = member["participant"]
    status_path = os.path.join(cohortlib.STATE_DIR, "status", f"{pid}.json")
    status = cohortlib.load_json(status_path)
    if status is not None and status.get("job") == plan["job"]:
        return f"{status['status']} (in an earlier try of this job)"
    attempts_path = os.path.join(ATTEMPTS_DIR, f"{pid}.json")
    attempts = cohortlib.load_json(attempts_path) or {}
    tries = attempts.get("tries", []) if attempts.get("job") == plan["job"] else []
    if tries and tries[-1] == "started":
        tries[-1] = "cancelled"  # a job that ran it was stopped before it finished
    if status is not None:
        # Gone until this run writes a new one: a run that fails leaves no stale "ok" behind.
        os.unlink(status_path)
    allowed = 1 + int(plan["retries"])
    while True:
        if len(tries) >= allowed:
            return give_up(plan, pid, tries, status_path)
        tries.append("started")
        cohortlib.write_atomic(attempts_path, json.dumps({"job": plan["job"], "tries": tries}) + "\n")
        log_path = os.path.join(cohortlib.STATE_DIR, "logs", f"{pid}.log")
        os.makedirs(os.path.dirname(log_path), exist_ok=True)
        with open(log_path, "a", encoding="utf-8", errors="backslashreplace") as log:
            log.write(f"---- {now()} try {len(tries)} of {allowed} (job {plan['job']})\n")
            log.flush()
            status, code = participant.run(
                plan["healthetl"], pid, member["export"], time_limit_s=member["time_limit_s"], tz=plan["tz"],
                pipelines=plan["pipelines"], include_me=plan["include_me"], run_key=plan["run_key"], log=log,
            )  # fmt: skip
        if status is None:
            # Not a try that was stopped: such a failure is the job's, and the run's (see above).
            tries.pop()
            cohortlib.write_atomic(attempts_path, json.dumps({"job": plan["job"], "tries": tries}) + "\n")
            return f"failed: healthetl exited with {code} (log: {log_path})"
        if status["status"] == cohortlib.TIMED_OUT:
            tries[-1] = cohortlib.TIMED_OUT
            if len(tries) < allowed:
                continue
            status["message"] = (
                f"healthetl run did not finish within its time limit of {member['time_limit_s']:g} s on any of "
                f"{len(tries)} tries and was stopped; the next run tries again "
                "(config.yaml: participant: time_limit_s_*, retries)"
            )
        else:
            tries[-1] = "finished"
        status["tries"] = len(tries)
        finish(status_path, status, plan["job"])
        cohortlib.write_atomic(attempts_path, json.dumps({"job": plan["job"], "tries": tries}) + "\n")
        return status["status"]


def give_up(plan: dict, pid: str, tries: list[str], status_path: str) -> str:
    """The status of a participant whose every try was stopped from outside or timed out."""
    cancelled = sum(1 for t in tries if t == "cancelled")
    status = {
        "participant": pid,
        "status": cohortlib.CANCELLED if cancelled else cohortlib.TIMED_OUT,
        "exit_code": None,
        "message": (
            f"its job was stopped while running it on {cancelled} of {len(tries)} tries (scancel, a node "
            "failure or Slurm's time limit); left out, and the next run tries again (config.yaml: retries)"
            if cancelled
            else f"healthetl run did not finish within its time limit on any of {len(tries)} tries; "
            "the next run tries again (config.yaml: participant: time_limit_s_*, retries)"
        ),
        "sha256": None,
        "stat": None,
        "run_key": plan["run_key"],
        "seconds": 0.0,
        "host": None,
        "token": os.urandom(16).hex(),
        "tries": len(tries),
    }
    finish(status_path, status, plan["job"])
    return status["status"]


def finish(path: str, status: dict, job: str) -> None:
    status["job"] = job
    status["finished"] = now()
    cohortlib.write_atomic(path, json.dumps(status, indent=1) + "\n")


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


if __name__ == "__main__":
    sys.exit(main())
