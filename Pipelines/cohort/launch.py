"""Run the cohort workflow: `make cohort COHORT=... OUT=... [EXECUTOR=local|slurm] [JOBS=n]`.

Takes OUT's lock (exit 75 when another cohort run holds it), then becomes Snakemake (exec, so a
signal or a kill reaches Snakemake itself and the lock dies with it) with the working directory
OUT, the profile of the executor, and absolute paths. Arguments after `--` go to Snakemake as
they are (`-- --dry-run`); `--config KEY=VALUE ...` overrides Pipelines/cohort/config.yaml.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
EX_LOCKED = 75


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
    os.set_inheritable(lock, True)  # held by Snakemake after the exec, released when it ends

    command = [
        sys.executable, "-m", "snakemake",
        "--snakefile", os.path.join(HERE, "Snakefile"),
        "--directory", out,
        "--profile", os.path.join(HERE, "profiles", args.executor),
        # The lock above replaces Snakemake's own, which a killed run leaves behind.
        "--nolock",
        "--config", *args.config, f"cohort={cohort}", f"healthetl={os.path.abspath(args.healthetl)}",
    ]  # fmt: skip
    if args.jobs > 0:
        command += ["--cores" if args.executor == "local" else "--jobs", str(args.jobs)]
    if args.executor == "slurm":
        command += slurm_arguments(args.slurm_account, args.slurm_partition)
    command += extra
    sys.stdout.flush()
    os.execv(sys.executable, command)
    return 0  # not reached


def slurm_arguments(account: str, partition: str) -> list[str]:
    if shutil.which("sbatch") is None:
        raise SystemExit("cohort: EXECUTOR=slurm, but sbatch is not on PATH")
    arguments = []
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


if __name__ == "__main__":
    sys.exit(main())
