#!/usr/bin/env python3
"""Where a run's CPU goes, thread by thread, during the parse and after it.

Usage: Tests/Tools/thread_cpu.py [--every SECONDS] [--timeline] -- COMMAND [ARG ...]
  e.g. Tests/Tools/thread_cpu.py -- .build/release/healthetl run --quiet --out /tmp/o export.xml

Runs COMMAND and reads every thread's CPU time (user + system, /proc/PID/task/TID/stat) each
`--every` seconds (default 0.1) until it exits. Threads are named by the run's executor
(`libxml2`, `read-ahead`, `database`, `workbook`, `pool`, …; the main thread is `main`). The parse
is the time the `libxml2` thread lives. Prints, per phase, each thread's CPU seconds and how busy it
was, and the core-seconds nobody used on this machine's cores: the room left for work moved into
that phase (issue 30). `--timeline` also prints each thread's busy share per interval.

Needs no perf and no hardware counters, so it works in a VM; CPU seconds move less than wall
time on a shared host, but compare runs interleaved all the same.
"""

import os
import subprocess
import sys
import time

PARSE_THREAD = "libxml2"


def read_threads(pid):
    """{tid: (name, cpu seconds)} of the process's threads now; {} once it is gone."""
    ticks = os.sysconf("SC_CLK_TCK")
    threads = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return threads
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        # The name is between the first '(' and the last ')'; it may hold spaces.
        name = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        cpu = (int(fields[11]) + int(fields[12])) / ticks
        threads[int(tid)] = ("main" if int(tid) == pid else name, cpu)
    return threads


def sample(command, every):
    """Runs `command`; returns [(seconds since start, {tid: (name, cpu)})] and its exit status."""
    started = time.monotonic()
    process = subprocess.Popen(command)
    samples = []
    while True:
        now = read_threads(process.pid)
        if process.poll() is not None:
            break
        samples.append((time.monotonic() - started, now))
        time.sleep(every)
    return samples, process.returncode


def phases(samples):
    """(start, end) of the parse and of what follows it, from when the libxml2 thread lives."""
    alive = [t for t, threads in samples if any(name == PARSE_THREAD for name, _ in threads.values())]
    end = samples[-1][0] if samples else 0.0
    if not alive:
        return [("whole run", 0.0, end)]
    return [("parse", 0.0, alive[-1]), ("after the parse", alive[-1], end)]


def cpu_between(samples, start, end):
    """{name: cpu seconds} used between two sample times, threads of one name added up."""
    def at(moment):
        # Every thread seen by then, with its last reading: one that has ended keeps its time.
        known = {}
        for t, threads in samples:
            if t > moment + 1e-9:
                break
            known.update(threads)
        return known

    before, after = at(start), at(end)
    used = {}
    for tid, (name, cpu) in after.items():
        used[name] = used.get(name, 0.0) + cpu - (before[tid][1] if tid in before else 0.0)
    return used


def main(argv):
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        sys.stderr.write(__doc__)
        return 64
    options, command = argv[1 : argv.index("--")], argv[argv.index("--") + 1 :]
    every = float(options[options.index("--every") + 1]) if "--every" in options else 0.1
    samples, status = sample(command, every)
    if len(samples) < 2:
        print("the command ended before a second sample; nothing to show")
        return status
    cores = os.cpu_count() or 1
    for phase, start, end in phases(samples):
        used = cpu_between(samples, start, end)
        wall = max(end - start, 1e-9)
        total = sum(used.values())
        print(f"{phase}: {wall:.2f} s wall, {total:.2f} s CPU, "
              f"{max(0.0, cores * wall - total):.2f} core-seconds unused of {cores} cores")
        for name, cpu in sorted(used.items(), key=lambda item: -item[1]):
            if cpu > 0.005:
                print(f"  {name:16} {cpu:7.2f} s  {100 * cpu / wall:4.0f} % busy")
    if "--timeline" in options:
        names = sorted({name for _, threads in samples for name, _ in threads.values()})
        print("time  " + " ".join(f"{name[:10]:>10}" for name in names) + "  all")
        for (t0, before), (t1, after) in zip(samples, samples[1:]):
            # A thread that ended between two readings drops out: its last interval is not shown.
            span = max(t1 - t0, 1e-9)
            share = {name: 0.0 for name in names}
            for tid, (name, cpu) in after.items():
                share[name] += (cpu - (before[tid][1] if tid in before else 0.0)) / span
            print(f"{t1:5.1f} " + " ".join(f"{100 * share[name]:10.0f}" for name in names)
                  + f" {100 * sum(share.values()):4.0f}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
