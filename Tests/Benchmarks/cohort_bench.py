"""Wall times of the cohort workflow against bare `healthetl run`, and per-GB costs.

    .build/cohort-venv/bin/python Tests/Benchmarks/cohort_bench.py small [--exports 8] [--mb 100] [--slurm | --slurm-only]
    .build/cohort-venv/bin/python Tests/Benchmarks/cohort_bench.py big --export FILE [--copies 4]
    .build/cohort-venv/bin/python Tests/Benchmarks/cohort_bench.py dag [--participants 1000]
    .build/cohort-venv/bin/python Tests/Benchmarks/cohort_bench.py scale [--participants 1000] [--slurm-participants 200]

`small`: N generated exports (cached in .build/bench/cohort/), each run by a bare `healthetl run`
one at a time and two at a time, then by the workflow with 1 and 2 concurrent jobs, locally and
(with --slurm, as root on a machine without Slurm) through a one-node Slurm started for it.
`big`: one large export for per-GB figures: a bare run's wall, CPU and peak memory, then the
workflow over N links to it and the merge alone, with its CPU and peak memory.
`dag`: the time the submitting process needs to plan N participants (a dry run).
`scale`: N small synthetic participants (two days each, cached) through `launch.py` as `make cohort`
runs it, locally with 2 jobs, then M of them on a one-node Slurm (as root on a machine without
Slurm) with JOBS=2; each a first run and a night on which one participant changed. Every
`healthetl run` goes through GNU time, so the overhead per participant is
(wall - CPU of every healthetl run) / participants; also the whole run's CPU, the merge's own
wall, and a full merge's peak memory measured alone.
Run it through /work/tools/locked (or on an otherwise idle machine): it measures CPU time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BINARY = REPO / ".build" / "release" / "healthetl"
LAUNCH = REPO / "Pipelines" / "cohort" / "launch.py"
MERGE = REPO / "Pipelines" / "cohort" / "merge.py"
CACHE = REPO / ".build" / "bench" / "cohort"
sys.path.insert(0, str(REPO / "Tests" / "EndToEnd"))


def timed(command, **kwargs) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and peak resident MB of one command (GNU time)."""
    with tempfile.NamedTemporaryFile("r") as report:
        started = time.monotonic()
        subprocess.run(
            ["/usr/bin/time", "-o", report.name, "-f", "%U %S %M", *command],
            check=True, stdout=subprocess.DEVNULL, **kwargs,
        )  # fmt: skip
        wall = time.monotonic() - started
        user, system, rss_kb = report.read().split()[-3:]
    return wall, float(user) + float(system), int(rss_kb) // 1024


def generate(count: int, megabytes: int) -> list[Path]:
    CACHE.mkdir(parents=True, exist_ok=True)
    exports = []
    for n in range(1, count + 1):
        target = CACHE / f"e{megabytes}mb-{n:02d}.xml"
        if not target.exists():
            scratch = Path(tempfile.mkdtemp(dir=CACHE))
            subprocess.run(
                [str(BINARY), "sample", "--target-mb", str(megabytes), "--seed", str(100 + n), "--out", str(scratch / "x.xml")],
                check=True, capture_output=True,
            )  # fmt: skip
            (scratch / "x.xml").rename(target)
            shutil.rmtree(scratch)
        exports.append(target)
    return exports


def bare(exports: list[Path], parallel: int, work: Path) -> float:
    def one(export: Path) -> None:
        out = work / f"bare-{parallel}" / export.stem
        subprocess.run([str(BINARY), "run", "--quiet", "--out", str(out), str(export)], check=True)

    started = time.monotonic()
    with ThreadPoolExecutor(parallel) as pool:
        list(pool.map(one, exports))
    return time.monotonic() - started


def workflow(cohort: Path, out: Path, executor: str, jobs: int, extra: list[str] = ()) -> dict:
    command = [sys.executable, str(LAUNCH), "--cohort", str(cohort), "--out", str(out), "--executor", executor]
    command += ["--jobs", str(jobs), *extra]
    started = time.monotonic()
    result = subprocess.run(["timeout", "-s", "KILL", "1800", *command], capture_output=True, text=True)
    wall = time.monotonic() - started
    if result.returncode != 0:
        raise SystemExit(f"workflow failed ({result.returncode}):\n{result.stderr[-4000:]}")
    summary = json.loads((out / "cohort" / "run.json").read_text())
    jobs_seconds = sum(p["seconds"] for p in summary["participants"])
    return {"wall": wall, "merge": summary["seconds"], "healthetl_in_jobs": jobs_seconds}


def small(args) -> None:
    exports = generate(args.exports, args.mb)
    work = Path(tempfile.mkdtemp(prefix="cohort-bench-"))
    try:
        cohort = work / "cohort"
        cohort.mkdir()
        for export in exports:
            os.symlink(export, cohort / export.name)
        xml_mb = sum(e.stat().st_size for e in exports) / 1e6
        print(f"{len(exports)} exports, {xml_mb:.0f} MB of XML in all")
        rows = []
        if not args.slurm_only:
            rows.append(("bare healthetl run, 1 at a time", bare(exports, 1, work), None))
            rows.append(("bare healthetl run, 2 at a time", bare(exports, 2, work), None))
            for jobs in (1, 2):
                result = workflow(cohort, work / f"local-{jobs}", "local", jobs)
                rows.append((f"workflow, local, {jobs} job(s)", result["wall"], result))
            again = workflow(cohort, work / "local-1", "local", 1)
            rows.append(("workflow, local, nothing to do", again["wall"], None))
        if args.slurm or args.slurm_only:
            from slurm_cluster import SlurmCluster

            reason = SlurmCluster.unavailable_reason()
            if reason:
                print(f"Slurm skipped: {reason}")
            else:
                with SlurmCluster() as cluster:
                    # As `make cohort` runs it: the profile's status intervals, nothing passed by hand.
                    slurm = ["--slurm-account", "root", "--slurm-partition", cluster.partition, "--"]
                    for jobs, threads in ((1, 2), (2, 2), (2, 1)):
                        extra = slurm + (["--set-threads", f"batch={threads}"] if threads != 2 else [])
                        result = workflow(cohort, work / f"slurm-{jobs}-{threads}", "slurm", jobs, extra)
                        rows.append((f"workflow, Slurm, {jobs} job(s), {threads} CPU(s) each", result["wall"], result))
        for label, wall, detail in rows:
            extra = ""
            if detail:
                extra = f"  (merge {detail['merge']:.2f} s; healthetl inside the jobs {detail['healthetl_in_jobs']:.2f} s)"
            print(f"{label:<48} {wall:7.2f} s{extra}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def big(args) -> None:
    export = Path(args.export).resolve()
    work = Path(tempfile.mkdtemp(prefix="cohort-bench-big-"))
    try:
        gb = export.stat().st_size / 1e9
        wall, cpu, rss = timed([str(BINARY), "run", "--quiet", "--out", str(work / "bare"), str(export)])
        outputs = sum(p.stat().st_size for p in (work / "bare").rglob("*") if p.is_file()) / 1e6
        print(f"bare run of {gb:.3f} GB: wall {wall:.2f} s, CPU {cpu:.2f} s, peak RSS {rss} MB, outputs {outputs:.1f} MB")
        cohort = work / "cohort"
        cohort.mkdir()
        for n in range(args.copies):
            os.symlink(export, cohort / f"big{n:02d}.xml")
        result = workflow(cohort, work / "out", "local", 1)
        print(
            f"workflow over {args.copies} links, 1 job: wall {result['wall']:.2f} s, healthetl inside the jobs "
            f"{result['healthetl_in_jobs']:.2f} s, merge {result['merge']:.2f} s"
        )
        out = work / "out"
        tables = json.dumps(
            {
                "sleep_daily": "sleep_daily.csv", "sleep_sessions": "sleep_sessions.csv", "workouts": "workouts.csv",
                "workout_records": "workout_records.json", "swim_laps": "swim_laps.csv", "stats/{name}": "stats/*.csv",
            }
        )  # fmt: skip
        for threads in (1, 2):
            (out / "cohort").unlink()  # no previous version: the merge reads every participant
            wall, cpu, rss = timed(
                [sys.executable, str(MERGE), "--participants", ".cohort/participants.txt", "--tables", tables,
                 "--marker", ".cohort/merged.json", "--threads", str(threads), "--memory-mb", "4096"],
                cwd=out,
            )  # fmt: skip
            merged = sum(p.stat().st_size for p in (out / "cohort").resolve().rglob("*.parquet")) / 1e6
            print(
                f"merge alone, {threads} thread(s): wall {wall:.2f} s, CPU {cpu:.2f} s, peak RSS {rss} MB "
                f"({args.copies * outputs:.0f} MB of participant outputs -> {merged:.1f} MB of Parquet)"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def dag(args) -> None:
    """How long the submitting process takes to plan N participants: parse, content keys, DAG."""
    work = Path(tempfile.mkdtemp(prefix="cohort-bench-dag-"))
    try:
        cohort = work / "cohort"
        cohort.mkdir()
        for n in range(args.participants):
            (cohort / f"p{n:05d}.xml").write_text("<HealthData/>\n")
        for attempt in ("first plan (no participant run yet)", "second plan"):
            started = time.monotonic()
            command = [sys.executable, str(LAUNCH), "--cohort", str(cohort), "--out", str(work / "out"), "--", "--dry-run", "--quiet", "all"]
            subprocess.run(command, check=True, capture_output=True)
            print(f"{args.participants} participants, {attempt}: {time.monotonic() - started:.1f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def small_exports(count: int) -> list[Path]:
    """`count` two-day synthetic exports (seeds 1..count), cached in .build/bench/cohort/small/."""
    folder = CACHE / "small"
    folder.mkdir(parents=True, exist_ok=True)
    exports = []
    for n in range(1, count + 1):
        target = folder / f"s{n:05d}.xml"
        if not target.exists():
            scratch = Path(tempfile.mkdtemp(dir=folder))
            subprocess.run(
                [str(BINARY), "sample", "--days", "2", "--seed", str(n), "--out", str(scratch / "x.xml")],
                check=True, capture_output=True,
            )  # fmt: skip
            (scratch / "x.xml").rename(target)  # without the workout-routes/ folder beside it
            shutil.rmtree(scratch)
        exports.append(target)
    return exports


def timing_wrapper(work: Path) -> tuple[Path, Path]:
    """A healthetl that runs the real one under GNU time, appending its CPU seconds to a file."""
    log = work / "healthetl-cpu.txt"
    wrapper = work / "healthetl"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'case "$1" in run) exec /usr/bin/time -a -o "{log}" -f "%U %S" "{BINARY}" "$@";; esac\n'
        f'exec "{BINARY}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper, log


def scale_run(cohort: Path, out: Path, executor: str, wrapper: Path, log: Path, extra: list[str]) -> dict:
    log.write_text("")
    command = [sys.executable, str(LAUNCH), "--cohort", str(cohort), "--out", str(out), "--executor", executor,
               "--jobs", "2", "--healthetl", str(wrapper), *extra]  # fmt: skip
    with open(out.parent / f"{out.name}-snakemake.log", "a") as messages:
        wall, cpu, _ = timed(["timeout", "-s", "KILL", "7200", *command], stderr=messages)
    healthetl_cpu = sum(float(u) + float(s) for u, s in (line.split() for line in log.read_text().splitlines() if line))
    summary = json.loads((out / "cohort" / "run.json").read_text())
    ran = summary["totals"]["ok"]
    participants = summary["totals"]["participants"]
    return {
        "wall": wall, "cpu": cpu, "healthetl_cpu": healthetl_cpu, "ran": ran,
        "overhead_per_participant": (wall - healthetl_cpu) / max(1, ran),
        "wall_per_participant": wall / max(1, ran), "merge": summary["seconds"], "participants": participants,
    }  # fmt: skip


def scale_report(label: str, r: dict) -> None:
    print(
        f"{label:<38} wall {r['wall']:7.1f} s  CPU {r['cpu']:7.1f} s  healthetl CPU {r['healthetl_cpu']:6.1f} s  "
        f"{r['ran']:>5} run  {r['wall_per_participant']:.3f} s wall/participant  "
        f"overhead {r['overhead_per_participant']:.3f} s/participant  merge {r['merge']:.2f} s",
        flush=True,
    )


def scale_nights(cohort: Path, out: Path, executor: str, work: Path, extra: list[str], spare: Path) -> None:
    wrapper, log = timing_wrapper(work)
    first = scale_run(cohort, out, executor, wrapper, log, extra)
    scale_report(f"{executor}, {first['participants']} participants, first run", first)
    victim = sorted(cohort.iterdir())[len(list(cohort.iterdir())) // 2]
    victim.unlink()
    os.symlink(spare, victim)  # another export under the same name: one participant changed
    second = scale_run(cohort, out, executor, wrapper, log, extra)
    scale_report(f"{executor}, one participant changed", second)
    print(f"  the night with one change took {second['wall'] / first['wall']:.3f} of the first run", flush=True)


def scale(args) -> None:
    exports = small_exports(max(args.participants, args.slurm_participants) + 1)
    spare = exports.pop()  # the changed participant's new export
    work = Path(tempfile.mkdtemp(prefix="cohort-bench-scale-"))
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs", flush=True)
    try:
        if args.participants:
            cohort = work / "local-cohort"
            cohort.mkdir()
            for export in exports[: args.participants]:
                os.symlink(export, cohort / export.name)
            out = work / "local-out"
            scale_nights(cohort, out, "local", work, [], spare)
            merge_alone(out)
        if args.slurm_participants:
            from slurm_cluster import SlurmCluster

            reason = SlurmCluster.unavailable_reason()
            if reason:
                print(f"Slurm skipped: {reason}")
            else:
                cohort = work / "slurm-cohort"
                cohort.mkdir()
                for export in exports[: args.slurm_participants]:
                    os.symlink(export, cohort / export.name)
                with SlurmCluster() as cluster:
                    extra = ["--slurm-account", "root", "--slurm-partition", cluster.partition]
                    scale_nights(cohort, work / "slurm-out", "slurm", work, extra, spare)
        load = os.getloadavg()
        print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def merge_alone(out: Path) -> None:
    """A full merge of every participant (nothing reused), and a night's merge, with peak memory."""
    config = json.loads(json.dumps(__import__("yaml").safe_load((REPO / "Pipelines/cohort/config.yaml").read_text())))
    tables = json.dumps(config["tables"], sort_keys=True)
    kinds = json.dumps(config.get("kinds_outside_database") or {}, sort_keys=True)
    command = [sys.executable, str(MERGE), "--participants", ".cohort/participants.txt", "--tables", tables,
               "--kinds", kinds, "--marker", ".cohort/bench-merged.json", "--threads", "2", "--memory-mb", "4096"]  # fmt: skip
    wall, cpu, rss = timed(command, cwd=out)
    print(f"merge alone, nothing changed (every file linked): wall {wall:.2f} s, CPU {cpu:.2f} s, peak RSS {rss} MB")
    (out / "cohort").unlink()  # the next merge finds no previous version: it reads every participant
    wall, cpu, rss = timed(command, cwd=out)
    files = sum(1 for _ in (out / "cohort").resolve().rglob("*.parquet"))
    print(f"merge alone, every participant read: wall {wall:.2f} s, CPU {cpu:.2f} s, peak RSS {rss} MB, {files} files")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("small")
    s.add_argument("--exports", type=int, default=8)
    s.add_argument("--mb", type=int, default=100)
    s.add_argument("--slurm", action="store_true", help="also through a one-node Slurm")
    s.add_argument("--slurm-only", action="store_true", help="only through a one-node Slurm")
    b = sub.add_parser("big")
    b.add_argument("--export", required=True)
    b.add_argument("--copies", type=int, default=4)
    d = sub.add_parser("dag")
    d.add_argument("--participants", type=int, default=1000)
    c = sub.add_parser("scale")
    c.add_argument("--participants", type=int, default=1000, help="locally (0: skip)")
    c.add_argument("--slurm-participants", type=int, default=200, help="on a one-node Slurm (0: skip)")
    args = parser.parse_args()
    {"small": small, "big": big, "dag": dag, "scale": scale}[args.mode](args)


if __name__ == "__main__":
    main()
