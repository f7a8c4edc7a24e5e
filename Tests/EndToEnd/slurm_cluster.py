"""A throw-away one-node Slurm cluster on 127.0.0.1 for the cohort tests.

Everything lives in one scratch folder (munge key, socket and logs; Slurm state, spool, logs and
pid files) except `/etc/slurm/slurm.conf` and `/etc/slurm/cgroup.conf`: Slurm 22.05 reads them
only there (the jobs' nested `srun` drops SLURM_CONF). So the cluster is brought up only where
no Slurm is configured or running, both files are written only when absent and removed again,
and every daemon is started here and stopped by its PID.

    reason = SlurmCluster.unavailable_reason()   # None, or why the Slurm part must be skipped
    with SlurmCluster() as cluster:              # up; down on leaving, even after a failure
        subprocess.run(["sbatch", ...])

Runs as a script too, to try it by hand: `python3 Tests/EndToEnd/slurm_cluster.py`.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SLURM_CONF = Path("/etc/slurm/slurm.conf")
CGROUP_CONF = Path("/etc/slurm/cgroup.conf")
DAEMONS = ("slurmctld", "slurmd", "slurmstepd", "munged")
COMMANDS = ("munged", "slurmctld", "slurmd", "srun", "sbatch", "squeue", "scancel", "scontrol", "sinfo")
PARTITION = "cohorttest"
START_TIMEOUT = 30.0


class ClusterError(Exception):
    pass


class SlurmCluster:
    @staticmethod
    def unavailable_reason() -> str | None:
        """Why this machine must not (or cannot) host the test cluster, or None."""
        if os.geteuid() != 0:
            return "the test cluster needs root (slurmd runs jobs as their user)"
        missing = [c for c in COMMANDS if shutil.which(c) is None]
        if missing:
            return f"not installed: {' '.join(missing)} (Debian: slurmctld slurmd slurm-client munge)"
        if os.environ.get("SLURM_CONF"):
            return f"SLURM_CONF is set ({os.environ['SLURM_CONF']}): this machine has a Slurm of its own"
        for path in (SLURM_CONF, CGROUP_CONF):
            if path.exists():
                return f"{path} exists: this machine has a Slurm of its own, which the test leaves alone"
        running = sorted(_pids_named(DAEMONS))
        if running:
            return "Slurm or munge daemons are already running (pids " + ", ".join(map(str, running)) + ")"
        try:
            pwd.getpwnam("munge")
        except KeyError:
            return "no 'munge' user (install the munge package)"
        return None

    def __init__(self):
        self.scratch: Path | None = None
        self.host = socket.gethostname().split(".")[0]
        self.pids: dict[str, int] = {}
        self.written: list[Path] = []
        self.partition = PARTITION
        self._stepd_before: set[int] = set()

    # ---- up ------------------------------------------------------------------------------------

    def __enter__(self) -> "SlurmCluster":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        reason = self.unavailable_reason()
        if reason:
            raise ClusterError(reason)
        self._stepd_before = _pids_named(("slurmstepd",))
        # Its own folder in the system temp folder: munged, running as the munge user, insists
        # that every folder above its socket is open to all.
        s = self.scratch = Path(tempfile.mkdtemp(prefix="healthetl-slurm-"))
        s.chmod(0o755)
        munge = pwd.getpwnam("munge")
        run = s / "munge"  # socket, pid, log, seed: owned by munge, 0755 (munged insists)
        key_dir = s / "munge-key"  # the key: owned by munge, 0700
        for folder, mode in ((run, 0o755), (key_dir, 0o700)):
            folder.mkdir(exist_ok=True)
            os.chown(folder, munge.pw_uid, munge.pw_gid)
            folder.chmod(mode)
        key = key_dir / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chown(key, munge.pw_uid, munge.pw_gid)
        key.chmod(0o600)
        for name in ("state", "spool", "log", "cgroup/systemd"):
            (s / name).mkdir(parents=True, exist_ok=True)

        self.socket = run / "munge.socket"
        subprocess.run(
            [
                "runuser", "-u", "munge", "--", "munged",
                f"--socket={self.socket}", f"--key-file={key}", f"--log-file={run / 'munged.log'}",
                f"--pid-file={run / 'munged.pid'}", f"--seed-file={run / 'munged.seed'}",
            ],
            check=True, timeout=30,
        )  # fmt: skip
        self.pids["munged"] = _read_pid(run / "munged.pid")

        ctld_port, slurmd_port = _free_ports(2)
        cpus = os.cpu_count() or 1
        memory = _node_memory_mb()
        conf = f"""# Written by the HealthETL cohort tests ({s}); removed when they end.
ClusterName=healthetl-test
SlurmctldHost={self.host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.socket}
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
StateSaveLocation={s / 'state'}
SlurmdSpoolDir={s / 'spool'}
SlurmctldPidFile={s / 'slurmctld.pid'}
SlurmdPidFile={s / 'slurmd.pid'}
SlurmctldLogFile={s / 'log' / 'slurmctld.log'}
SlurmdLogFile={s / 'log' / 'slurmd.log'}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
SchedulerParameters=batch_sched_delay=0
MailProg=/bin/true
ReturnToService=2
NodeName={self.host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory} State=UNKNOWN
PartitionName={PARTITION} Nodes={self.host} Default=YES MaxTime=INFINITE State=UP
"""
        cgroup = f"""# Written by the HealthETL cohort tests; removed when they end.
CgroupPlugin=cgroup/v1
CgroupMountpoint={s / 'cgroup'}
CgroupAutomount=no
"""
        for path, text in ((SLURM_CONF, conf), (CGROUP_CONF, cgroup)):
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "x") as handle:  # "x": never replace a file someone else wrote
                handle.write(text)
            self.written.append(path)
            (s / path.name).write_text(text)  # what we wrote, to recognize it when removing

        subprocess.run(["slurmctld"], check=True, timeout=30)
        self.pids["slurmctld"] = _wait_pid(s / "slurmctld.pid")
        subprocess.run(["slurmd"], check=True, timeout=30)
        self.pids["slurmd"] = _wait_pid(s / "slurmd.pid")

        deadline = time.monotonic() + START_TIMEOUT
        while True:
            probe = subprocess.run(["srun", "-t", "1", "true"], capture_output=True, text=True, timeout=30)
            if probe.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise ClusterError(f"the test cluster did not run a job within {START_TIMEOUT:.0f} s: {probe.stderr.strip()}")
            time.sleep(0.3)

    # ---- down ----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Cancel every job, stop the daemons by PID, remove what start() wrote. Never raises
        before it has tried every step."""
        errors = []
        if "slurmctld" in self.pids:
            try:
                subprocess.run(["scancel", "--full", f"--partition={PARTITION}"], capture_output=True, timeout=15)
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:
                    queue = subprocess.run(["squeue", "-h"], capture_output=True, text=True, timeout=15)
                    if queue.returncode != 0 or not queue.stdout.strip():
                        break
                    time.sleep(0.3)
            except (OSError, subprocess.SubprocessError) as error:
                errors.append(f"scancel: {error}")
        for name in ("slurmd", "slurmctld", "munged"):
            pid = self.pids.pop(name, None)
            if pid is not None and not _stop_pid(pid):
                errors.append(f"{name} (pid {pid}) did not stop")
        # Job steps outlive a killed slurmd; any that appeared since start() are this cluster's.
        for pid in _pids_named(("slurmstepd",)) - self._stepd_before:
            _stop_pid(pid)
        for path in self.written:
            ours = self.scratch / path.name if self.scratch else None
            try:
                if ours is not None and ours.exists() and path.read_text() == ours.read_text():
                    path.unlink()
                else:
                    errors.append(f"{path} changed since the test wrote it; left in place")
            except FileNotFoundError:
                pass
        self.written = []
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
        if errors:
            print("slurm_cluster: " + "; ".join(errors), file=sys.stderr)

    def running_daemons(self) -> dict[str, int]:
        return {name: pid for name, pid in self.pids.items() if _alive(pid)}


# ---- helpers -----------------------------------------------------------------------------------


def _pids_named(names: tuple[str, ...]) -> set[int]:
    """Live processes (zombies waiting for init to reap them do not count) with one of these names."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/comm") as handle:
                if handle.read().strip() in names and _alive(int(entry)):
                    found.add(int(entry))
        except OSError:
            continue
    return found


def _free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _node_memory_mb() -> int:
    """A little under what slurmd detects, or it drains the node as having too little memory."""
    detected = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, timeout=30).stdout
    for field in detected.split():
        if field.startswith("RealMemory="):
            return max(256, int(int(field.split("=", 1)[1]) * 0.9))
    return 1024


def _read_pid(path: Path) -> int:
    return int(path.read_text().strip())


def _wait_pid(path: Path, timeout: float = 10.0) -> int:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return _read_pid(path)
        except (FileNotFoundError, ValueError):
            if time.monotonic() > deadline:
                raise ClusterError(f"{path} did not appear")
            time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def _stop_pid(pid: int, grace: float = 5.0) -> bool:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if not _alive(pid):
                return True
            time.sleep(0.05)
    return not _alive(pid)


if __name__ == "__main__":
    why = SlurmCluster.unavailable_reason()
    if why:
        sys.exit(f"skipped: {why}")
    with SlurmCluster() as cluster:
        print("up:", cluster.running_daemons())
        print(subprocess.run(["sinfo"], capture_output=True, text=True).stdout)
        print(subprocess.run(["srun", "-t", "1", "hostname"], capture_output=True, text=True).stdout)
    print("down; still running:", sorted(_pids_named(DAEMONS)))
