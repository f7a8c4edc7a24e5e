"""What the cohort workflow shares between the Snakefile, the participant job and the merge.

Standard library only: the Snakefile imports this at parse time, in the submitting process and
again inside every Slurm job.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import stat
import tempfile
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path

EXPORT_SUFFIXES = (".zip", ".xml")
# The clinical documents an export carries beside its main XML; `healthetl run` never takes it.
CLINICAL_DOCUMENT = "export_cda.xml"
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
STATE_DIR = ".cohort"  # inside OUT: the workflow's own bookkeeping
MANIFEST_COLUMNS = ("participant", "export")
TIMED_OUT = "timed_out"  # the status of a participant whose `healthetl run` hit its time limit


class CohortError(Exception):
    """A problem with the cohort's input that stops the workflow before any job runs."""


# ---- participants ------------------------------------------------------------------------------


def participant_id_from_name(name: str) -> str:
    """A participant id from an export's file name: the name without `.zip`/`.xml`, every run of
    characters outside `A-Z a-z 0-9 . _ -` replaced by one `_`, trimmed of `._-` at both ends.
    The name is taken in Unicode NFC first: a copy from macOS may spell `é` as `e` and an accent.

    A name with no ASCII letter or digit (`日本.zip`, `é.xml`, `__.zip`) would leave nothing, so
    its id is `id-` and the first 12 hex digits of the SHA-256 of its stem as UTF-8 (a name that
    is not UTF-8: its own bytes). The same name gives the same id on every run and machine."""
    stem = unicodedata.normalize("NFC", name)
    for suffix in EXPORT_SUFFIXES:
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("._-")[:100]
    if cleaned:
        return cleaned
    return "id-" + hashlib.sha256(_bytes(stem)).hexdigest()[:12]


def discover(cohort: str | os.PathLike) -> dict[str, str]:
    """Participant id → absolute export path, sorted by id.

    `cohort` is a folder (every entry `is_export_entry` accepts is one participant's export) or a
    manifest CSV with the columns `participant,export` (paths relative to the manifest's folder).
    Ids never come from the contents of an export.
    """
    path = Path(cohort).expanduser()
    if not path.exists():
        raise CohortError(f"{path}: no such file or folder")
    if path.is_dir():
        found: dict[str, str] = {}
        for entry in sorted(path.iterdir()):
            if not is_export_entry(entry):
                continue
            pid = participant_id_from_name(entry.name)
            if not ID_PATTERN.match(pid):
                raise CohortError(f"{entry}: cannot make a participant id from this name; rename it or use a manifest")
            if pid in found:
                raise CohortError(
                    f"{found[pid]} and {entry} both give the participant id '{pid}'; rename one or use a manifest"
                )
            found[pid] = str(entry.resolve())
        if not found:
            raise CohortError(f"{path}: no exports (*.zip, *.xml or export folders) in this folder")
        return dict(sorted(found.items()))
    return read_manifest(path)


def not_exports(cohort: str | os.PathLike) -> list[str]:
    """The visible entries of a cohort folder that are not participants (folders end in `/`)."""
    path = Path(cohort).expanduser()
    if not path.is_dir():
        return []
    return [
        entry.name + ("/" if entry.is_dir() else "")
        for entry in sorted(path.iterdir())
        if not entry.name.startswith(".") and not is_export_entry(entry)
    ]


def is_export_entry(entry: Path) -> bool:
    """Whether an entry of a cohort folder is a participant's export: a visible name ending in
    `.zip` or `.xml` (whatever it turns out to be: a FIFO or a device so named is a participant
    whose job reports it as bad input), or a folder holding an XML file where `healthetl run`
    looks for the main one. A `workout-routes/` folder of GPX files, notes and other files are
    not exports. A link in the cohort folder is followed: that is how a cohort names exports
    kept elsewhere (links inside an export never are)."""
    if entry.name.startswith("."):
        return False
    if entry.name.lower().endswith(EXPORT_SUFFIXES):
        return True
    return entry.is_dir() and holds_export_xml(entry)


def holds_export_xml(folder: Path) -> bool:
    """Whether `folder` or its `apple_health_export/` holds an `*.xml` file other than the clinical
    documents: the places `healthetl run` searches. Names only; nothing is opened."""
    for place in (folder, folder / "apple_health_export"):
        try:
            with os.scandir(place) as entries:
                if any(e.name.lower().endswith(".xml") and e.name != CLINICAL_DOCUMENT for e in entries):
                    return True
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            return True  # cannot be listed: a participant, so that its job reports healthetl's message
    return False


def read_manifest(manifest: Path) -> dict[str, str]:
    base = manifest.resolve().parent
    found: dict[str, str] = {}
    exports: dict[str, str] = {}
    with open(manifest, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        header = [name.strip() for name in (reader.fieldnames or [])]
        if tuple(header[:2]) != MANIFEST_COLUMNS:
            raise CohortError(f"{manifest}: the first line must be 'participant,export'")
        for line, row in enumerate(reader, start=2):
            pid = (row.get("participant") or "").strip()
            export = (row.get("export") or "").strip()
            if not pid and not export:
                continue
            if not ID_PATTERN.match(pid):
                raise CohortError(
                    f"{manifest}:{line}: participant id '{pid}' must be 1-100 of A-Z a-z 0-9 . _ - "
                    "and start with a letter or digit"
                )
            if pid in found:
                raise CohortError(f"{manifest}:{line}: participant '{pid}' is listed twice")
            target = (base / export).resolve()
            if not target.exists():
                raise CohortError(f"{manifest}:{line}: {target}: no such file or folder")
            if str(target) in exports:
                raise CohortError(
                    f"{manifest}:{line}: {target} is also the export of participant '{exports[str(target)]}'"
                )
            found[pid] = str(target)
            exports[str(target)] = pid
    if not found:
        raise CohortError(f"{manifest}: lists no participants")
    return dict(sorted(found.items()))


# ---- content keys ------------------------------------------------------------------------------


# Only regular files inside the export are ever read. A link is keyed by where it points and never
# followed, so a link out of the export (to another person's data, to /dev/zero) costs nothing and
# is not part of this participant's content; a FIFO, socket or device is keyed by its kind and
# never opened (a FIFO's open waits for a writer, /dev/zero never ends). The export path itself is
# already resolved (`discover`), so it is taken as it is, not followed either.


def export_kind(path: str) -> str | None:
    """What an export path names: "file", "folder", "link", "FIFO", "socket", "character device",
    "block device"; None when there is nothing there (or it cannot be looked at)."""
    try:
        return _kind(os.lstat(path).st_mode)
    except OSError:
        return None


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISREG, "file"),
        (stat.S_ISDIR, "folder"),
        (stat.S_ISLNK, "link"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return name
    return "special file"


def stat_signature(path: str) -> list:
    """What changes whenever the export's content can have changed: size, mtime, ctime and inode
    (ctime also moves on `touch -d`, `cp -p` and rename-over); for a folder, those of every entry
    below it with its kind. The device number is left out because it differs between the hosts
    of a cluster that mount the same file system. Nothing is followed or opened."""

    def one(info: os.stat_result) -> list:
        return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]

    try:
        info = os.lstat(path)
    except OSError as error:
        return ["missing", error.errno]
    if stat.S_ISDIR(info.st_mode):
        return [[_text(rel), kind, *(one(entry) if entry else [])] for rel, kind, entry in _entries_below(path)]
    return one(info)


def content_sha256(path: str) -> str:
    """SHA-256 of a file's bytes (the same value `healthetl run` writes as `input.sha256`), or for
    a folder `dir:` + the SHA-256 over every entry's relative path and key: a regular file's
    SHA-256, `link:` + a link's target, the kind of anything else. `missing`, or `special:` + the
    kind, for an export path that is not a file or a folder."""
    kind = export_kind(path)
    if kind == "folder":
        outer = hashlib.sha256()
        for rel, entry_kind, _ in _entries_below(path):
            key = _entry_key(os.path.join(path, rel), entry_kind)
            outer.update(_bytes(rel) + b"\0" + _bytes(key) + b"\n")
        return "dir:" + outer.hexdigest()
    if kind == "file":
        return _entry_key(path, kind)
    return "missing" if kind is None else "special:" + kind


def _entry_key(path: str, kind: str) -> str:
    if kind == "file":
        try:
            return _file_sha256(path)
        except OSError as error:
            return "unreadable:" + (error.strerror or str(error))  # healthetl reports it, if it needs the file
    if kind == "link":
        try:
            return "link:" + os.readlink(path)
        except OSError as error:
            return "unreadable:" + (error.strerror or str(error))
    return kind


def _file_sha256(path: str) -> str:
    with open_regular(path) as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def open_regular(path: str):
    """A regular file opened for binary reading, without following a final link and without
    waiting: whatever took the file's place since it was looked at (a link, a FIFO) is refused
    with an OSError instead of being read."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _entries_below(root: str) -> list[tuple[str, str, os.stat_result | None]]:
    """Every entry below `root` except the folders walked into, as (relative path, kind, lstat),
    in `os.walk`'s order (a folder's other entries by name, then its sub-folders). Links are
    never followed; a folder that cannot be listed is one entry of kind "unlisted folder"."""
    found: list[tuple[str, str, os.stat_result | None]] = []
    pending = [""]
    while pending:
        rel = pending.pop()
        try:
            with os.scandir(os.path.join(root, rel)) as listing:
                names = sorted(entry.name for entry in listing)
        except OSError:
            found.append((rel or ".", "unlisted folder", None))
            continue
        folders = []
        for name in names:
            child = os.path.join(rel, name) if rel else name
            try:
                info = os.lstat(os.path.join(root, child))
            except OSError:
                continue  # gone since the listing
            if stat.S_ISDIR(info.st_mode):
                folders.append(child)
            else:
                found.append((child, _kind(info.st_mode), info))
        pending.extend(reversed(folders))
    return found


def _bytes(name: str) -> bytes:
    return name.encode("utf-8", "surrogateescape")  # a name's own bytes, UTF-8 or not


def _text(name: str) -> str:
    """A file name fit for JSON whatever its bytes (names that are not UTF-8 keep their bytes)."""
    return _bytes(name).decode("utf-8", "backslashreplace")


def xml_bytes(path: str) -> int:
    """How many bytes of XML `healthetl run` will parse: a zip's largest member uncompressed
    (read from the central directory, nothing inflated), a folder's largest regular file, else
    the size; 0 for anything that is not a file or a folder."""
    kind = export_kind(path)
    if kind == "folder":
        return max((info.st_size for _, entry_kind, info in _entries_below(path) if entry_kind == "file"), default=0)
    if kind != "file":
        return 0
    try:
        with open_regular(path) as handle:
            if zipfile.is_zipfile(handle):
                with zipfile.ZipFile(handle) as archive:
                    return max((info.file_size for info in archive.infolist()), default=0)
    except (OSError, zipfile.BadZipFile):
        pass
    return os.path.getsize(path)


def time_limit_seconds(xml_bytes: int, settings: dict) -> int:
    """`healthetl run`'s time limit for one export: `time_limit_s_base` + `time_limit_s_per_gb` per
    GB of XML, at most `time_limit_s_max` (a zip's directory can claim any size)."""
    wanted = settings["time_limit_s_base"] + settings["time_limit_s_per_gb"] * xml_bytes / 1e9
    return max(1, int(min(wanted, settings["time_limit_s_max"])))


# Statuses after which every run tries the participant again: a slow node or a lost job is no
# verdict on the export.
CANCELLED = "cancelled"  # its job was stopped (scancel, node failure, Slurm's limit) on every try
RETRIED_STATUSES = (TIMED_OUT, CANCELLED)


@dataclass
class Check:
    stale: list[str]  # participants to run now, in id order
    changed: list[str]  # their export's content differs from what their last run read
    retried: list[str]  # stopped at their time limit, or cancelled, last time
    statuses: dict[str, dict]  # the status files read (participants that have one)


def check_participants(
    participants: dict[str, str], run_key: str, state: str | os.PathLike = STATE_DIR
) -> Check:
    """Which participants must run: no status file (new, or its last job failed or was killed),
    `timed_out` or `cancelled` last time, another `run_key` (pipelines, tz, include_me, binary),
    or an export whose content differs from what the last run read.

    Whether the content differs is decided by stat first: an export whose size, mtime, ctime and
    inode equal those the job saw is unchanged without reading a byte; otherwise its SHA-256 is
    computed here (and remembered in `<state>/fingerprints.json` against the new stat), so a
    `touch` costs one read and no rerun, while a replaced export reruns even when its mtime is
    older than the outputs.
    """
    state = Path(state)
    memo_path = state / "fingerprints.json"
    memo = load_json(memo_path) or {}
    memo_dirty = False
    result = Check(stale=[], changed=[], retried=[], statuses={})
    for pid, export in participants.items():
        status = load_json(state / "status" / f"{pid}.json")
        if status is None:
            result.stale.append(pid)
            continue
        result.statuses[pid] = status
        if status.get("status") in RETRIED_STATUSES:
            result.stale.append(pid)
            result.retried.append(pid)
            continue
        if status.get("run_key") != run_key:
            result.stale.append(pid)
            continue
        signature = stat_signature(export)
        if status.get("stat") == signature and status.get("sha256"):
            sha = status["sha256"]
        elif memo.get(pid, {}).get("stat") == signature:
            sha = memo[pid]["sha256"]
        else:
            sha = content_sha256(export)
            memo[pid] = {"stat": signature, "sha256": sha}
            memo_dirty = True
        if sha != status.get("sha256"):
            result.stale.append(pid)
            result.changed.append(pid)
    stale = [pid for pid in memo if pid not in participants]
    for pid in stale:
        del memo[pid]
        memo_dirty = True
    if memo_dirty:
        write_atomic(memo_path, json.dumps(memo, indent=1, sort_keys=True) + "\n")
    return result


# ---- jobs: participants grouped -----------------------------------------------------------------


def participant_threads(xml_bytes: int, settings: dict) -> int:
    """CPUs one participant's `healthetl run` asks for: 1 below `one_cpu_below_mb` of XML (a small
    export's run is over before a second thread pays), else `threads`."""
    return 1 if xml_bytes < settings["one_cpu_below_mb"] * 1e6 else int(settings["threads"])


def participant_mem_mb(xml_bytes: int, settings: dict) -> int:
    return int(settings["mem_mb_base"] + settings["mem_mb_per_gb"] * xml_bytes / 1e9 + 0.999)


def group_size(count: int, per_job: int, parallel: int) -> int:
    """Participants per job: `per_job`, but no more than spreads `count` participants over
    `parallel` concurrent jobs (0: no limit known), so a small cohort still fills every slot."""
    size = max(1, per_job)
    if parallel > 0 and count > 0:
        size = min(size, -(-count // parallel))
    return size


def plan_jobs(stale: list[str], sizes: dict[str, int], settings: dict, *, per_job: int, xml_mb_per_job: float,
              parallel: int) -> list[list[str]]:
    """The stale participants in groups, one job each: in id order, those of one CPU class
    together, a group closed at `group_size` participants or `xml_mb_per_job` MB of XML."""
    size = group_size(len(stale), per_job, parallel)
    groups: list[list[str]] = []
    by_class: dict[int, list[str]] = {}
    for pid in stale:
        by_class.setdefault(participant_threads(sizes[pid], settings), []).append(pid)
    for _, members in sorted(by_class.items()):
        current: list[str] = []
        current_bytes = 0
        for pid in members:
            if current and (len(current) >= size or current_bytes + sizes[pid] > xml_mb_per_job * 1e6):
                groups.append(current)
                current, current_bytes = [], 0
            current.append(pid)
            current_bytes += sizes[pid]
        if current:
            groups.append(current)
    return groups


def is_published(published: dict | None, participants: dict[str, str], statuses: dict[str, dict]) -> bool:
    """Whether the published `cohort/run.json` is the merge of exactly these participants' statuses."""
    if not published:
        return False
    tokens = {p.get("participant"): p.get("token") for p in published.get("participants", [])}
    return tokens == {pid: (statuses.get(pid) or {}).get("token") for pid in participants}


# ---- small file helpers ------------------------------------------------------------------------


def load_json(path: str | os.PathLike):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return None


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Write a whole file or nothing: a sibling temporary file, fsync, rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # what open() would have given, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_if_changed(path: str | os.PathLike, text: str) -> bool:
    """Rewrite only when the content differs, so the file's mtime moves only on a real change."""
    path = Path(path)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    write_atomic(path, text)
    return True


def pipeline_files(pipelines: list[str]) -> list[str]:
    """The pipeline files and the workout code tables they name (relative to the pipeline)."""
    files: list[str] = []
    for pipeline in pipelines:
        files.append(pipeline)
        try:
            with open(pipeline, encoding="utf-8") as handle:
                definition = json.load(handle)
        except (OSError, ValueError):
            continue  # healthetl reports it, with the key path, in the job
        for job in definition.get("jobs", []) if isinstance(definition, dict) else []:
            codes = job.get("codes") if isinstance(job, dict) else None
            if isinstance(codes, str):
                files.append(os.path.join(os.path.dirname(pipeline), codes))
    return files


def files_sha256(paths: list[str]) -> str:
    """One SHA-256 over several small files' names and contents (missing files count as empty)."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(os.path.basename(path).encode() + b"\0")
        try:
            with open(path, "rb") as handle:
                digest.update(handle.read())
        except OSError:
            pass
        digest.update(b"\0")
    return digest.hexdigest()
