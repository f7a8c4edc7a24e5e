"""Run the cohort workflow: `make cohort COHORT=... OUT=... [EXECUTOR=local|slurm] [JOBS=n]`.

Takes OUT's lock (exit 75 when another cohort run holds it), then runs Snakemake with the working
directory OUT, the profile of the executor and absolute paths, and watches it:
- SIGTERM, SIGINT or SIGHUP is passed on to Snakemake, which cancels its Slurm jobs and stops;
  one that has not stopped `--stop-grace-s` later is killed, and on Slurm every job of this run
  is cancelled (`scancel`) — so the run always ends;
- on Slurm, a job of this run that waits in the queue longer than `--pending-timeout-min` (a
  node drained, a request no node can meet) ends the run the same way, with one line saying
  which job waited, for how long and why (Slurm's reason), and exit 75.
Arguments after `--` go to Snakemake as they are (`-- --dry-run`); `--config KEY=VALUE ...`
overrides Pipelines/cohort/config.yaml.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
EX_LOCKED = 75
EX_TEMPFAIL = 75  # a job waited too long in Slurm's queue: try again later
WATCH_SECONDS = 2.0  # how often the queue is looked at


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cohort", required=True, help="folder of exports, or a manifest CSV (participant,export)")
    parser.add_argument("--out", required=True, help="output folder: participants/<id>/, cohort/")
    parser.add_argument("--executor", choices=["local", "slurm"], default="local")
    parser.add_argument("--jobs", type=int, default=0, help="concurrent jobs (local: cores); default from the profile")
    parser.add_argument("--healthetl", default=os.path.join(REPO, ".build", "release", "healthetl"))
    parser.add_argument("--config", nargs="*", action="extend", default=[], metavar="KEY=VALUE")
    parser.add_argument("--slurm-account", default=os.environ.get("SLURM_ACCOUNT", ""))
    parser.add_argument("--slurm-partition", default=os.environ.get("SLURM_PARTITION", ""))
    parser.add_argument("--pending-timeout-min", type=float, default=60.0,
                        help="Slurm: end the run when one of its jobs waits this long in the queue (0: never)")
    parser.add_argument("--stop-grace-s", type=float, default=30.0,
                        help="after a stop signal, how long Snakemake may take before it is killed")
    args = parser.parse_args(argv)

    cohort = os.path.abspath(os.path.expanduser(args.cohort))
    out = os.path.abspath(os.path.expanduser(args.out))
    if not os.path.exists(cohort):
        print(f"cohort: {cohort}: no such file or folder", file=sys.stderr)
        return 66
    if not os.access(args.healthetl, os.X_OK):
        print(f"cohort: {args.healthetl}: not built (make release)", file=sys.stderr)
        return 66
    os.makedirs(os.path.join(out, ".cohort"), exist_ok=True)

    lock = os.open(os.path.join(out, ".cohort", "lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"cohort: another cohort run is writing {out}", file=sys.stderr)
        return EX_LOCKED
    os.set_inheritable(lock, True)  # Snakemake holds it too: the lock lives while either runs

    settings = read_config(args.config)
    parallel = args.jobs if args.jobs > 0 else (2 if args.executor == "local" else 0)
    command = [
        sys.executable, "-m", "snakemake",
        "--snakefile", os.path.join(HERE, "Snakefile"),
        "--directory", out,
        "--profile", os.path.join(HERE, "profiles", args.executor),
        # The lock above replaces Snakemake's own, which a killed run leaves behind.
        "--nolock",
        # A job stopped from outside is submitted again; batch.py counts the participant's tries.
        "--retries", str(int(settings["retries"]) + 1),
        "--config", *args.config, f"cohort={cohort}", f"healthetl={os.path.abspath(args.healthetl)}",
        f"parallel={parallel}", f"executor={args.executor}",
    ]  # fmt: skip
    prefix = None
    if args.executor == "slurm":
        prefix = f"healthetl-cohort-{uuid.uuid4().hex[:8]}"
        # The Snakefile starts a small night's jobs with srun itself: under the same name prefix,
        # account and partition as the plugin's.
        command.append(f"slurm_job_prefix={prefix}")
        command += [f"slurm_{key}={value}" for key, value in (("account", args.slurm_account), ("partition", args.slurm_partition)) if value]
    if args.jobs > 0:
        command += ["--cores" if args.executor == "local" else "--jobs", str(args.jobs)]
    if prefix:
        command += slurm_arguments(args.slurm_account, args.slurm_partition, prefix)
    command += extra
    sys.stdout.flush()
    return supervise(command, prefix, args.pending_timeout_min * 60, args.stop_grace_s)


def read_config(overrides: list[str]) -> dict:
    import yaml  # Snakemake's own dependency, in the workflow's venv

    with open(os.path.join(HERE, "config.yaml"), encoding="utf-8") as handle:
        settings = yaml.safe_load(handle)
    for item in overrides:
        key, _, value = item.partition("=")
        settings[key] = yaml.safe_load(value)
    return settings


def slurm_arguments(account: str, partition: str, prefix: str) -> list[str]:
    if shutil.which("sbatch") is None:
        raise SystemExit("cohort: EXECUTOR=slurm, but sbatch is not on PATH")
    arguments = ["--slurm-jobname-prefix", prefix]
    config = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True).stdout
    if "accounting_storage/none" in config:
        # Without an accounting database sacct knows no jobs, and the plugin would wait forever.
        arguments += ["--slurm-status-command", "squeue"]
    defaults = [f"slurm_account={account}"] if account else []
    if partition:
        defaults.append(f"slurm_partition={partition}")
    if defaults:
        arguments += ["--default-resources", *defaults]
    return arguments


def supervise(command: list[str], prefix: str | None, pending_timeout_s: float, grace_s: float) -> int:
    """Runs Snakemake to its end; returns its exit code, or this launcher's own verdict."""
    stop_requested: list[int] = []

    def on_signal(signum, frame):
        stop_requested.append(signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, on_signal)
    snakemake = subprocess.Popen(command)
    stop_deadline = None
    verdict = None
    waited_since: dict[str, float] = {}
    next_look = time.monotonic() + WATCH_SECONDS
    while True:
        try:
            code = snakemake.wait(timeout=0.2)
            break
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if stop_requested and stop_deadline is None:
            signum = stop_requested[0]
            print(f"cohort: {signal.Signals(signum).name}: stopping Snakemake and its jobs", file=sys.stderr, flush=True)
            snakemake.send_signal(signal.SIGTERM if signum == signal.SIGHUP else signum)
            if prefix:
                # Snakemake waits for its local jobs, an `srun` among them (a small night's), to end.
                cancel_jobs(prefix)
            stop_deadline = now + grace_s
            verdict = 128 + signum
        if stop_deadline is not None and now > stop_deadline:
            print(f"cohort: Snakemake did not stop within {grace_s:g} s; killed", file=sys.stderr, flush=True)
            snakemake.kill()
        if prefix and pending_timeout_s > 0 and stop_deadline is None and now >= next_look:
            next_look = now + WATCH_SECONDS
            stuck = pending_too_long(prefix, waited_since, now, pending_timeout_s)
            if stuck:
                print(stuck, file=sys.stderr, flush=True)
                snakemake.send_signal(signal.SIGTERM)
                cancel_jobs(prefix)
                stop_deadline = now + grace_s
                verdict = EX_TEMPFAIL
    if prefix:
        cancel_jobs(prefix)  # whatever Snakemake left queued or running, on any way out
    return verdict if verdict is not None else code


def queue(prefix: str) -> list[tuple[str, str, str, str]]:
    """This run's jobs in Slurm's queue: (job id, name, state, reason)."""
    result = subprocess.run(
        ["squeue", "-h", "-o", "%i|%j|%T|%r"], capture_output=True, text=True, timeout=60
    )
    rows = []
    for line in result.stdout.splitlines():
        fields = line.split("|", 3)
        if len(fields) == 4 and fields[1].startswith(prefix + "_"):
            rows.append(tuple(fields))
    return rows


def pending_too_long(prefix: str, waited_since: dict[str, float], now: float, limit_s: float) -> str | None:
    """The error line for a job of this run that has been PENDING longer than `limit_s`, or None.
    The wait is timed here, from when this launcher first saw the job pending."""
    try:
        rows = queue(prefix)
    except (OSError, subprocess.SubprocessError):
        return None  # squeue did not answer this time; Snakemake's own status checks go on
    pending = {job: reason for job, _, state, reason in rows if state == "PENDING"}
    for job in list(waited_since):
        if job not in pending:
            del waited_since[job]
    for job, reason in pending.items():
        since = waited_since.setdefault(job, now)
        if now - since > limit_s:
            return (
                f"cohort: Slurm job {job} has waited {now - since:.0f} s in the queue (reason: {reason}), longer "
                f"than the pending limit of {limit_s:g} s; the run is stopped and its jobs cancelled. Check "
                "`sinfo` (nodes down or drained?) and what the jobs ask for (config.yaml: participant:), or raise "
                "PENDING_TIMEOUT (minutes)"
            )
    return None


def cancel_jobs(prefix: str) -> None:
    try:
        jobs = [job for job, *_ in queue(prefix)]
        if jobs:
            subprocess.run(["scancel", *jobs], capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        print(f"cohort: could not cancel this run's Slurm jobs: {error}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
