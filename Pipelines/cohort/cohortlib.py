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
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

EXPORT_SUFFIXES = (".zip", ".xml")
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
STATE_DIR = ".cohort"  # inside OUT: the workflow's own bookkeeping
MANIFEST_COLUMNS = ("participant", "export")


class CohortError(Exception):
    """A problem with the cohort's input that stops the workflow before any job runs."""


# ---- participants ------------------------------------------------------------------------------


def participant_id_from_name(name: str) -> str:
    """A participant id from an export's file name: the name without `.zip`/`.xml`, every run of
    characters outside `A-Z a-z 0-9 . _ -` replaced by one `_`, trimmed of `._-` at both ends."""
    stem = name
    for suffix in EXPORT_SUFFIXES:
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("._-")
    return cleaned[:100]


def discover(cohort: str | os.PathLike) -> dict[str, str]:
    """Participant id → absolute export path, sorted by id.

    `cohort` is a folder (every `*.zip` / `*.xml` file and every sub-folder in it is one
    participant's export; hidden entries are ignored) or a manifest CSV with the columns
    `participant,export` (paths relative to the manifest's folder). Ids never come from the
    contents of an export.
    """
    path = Path(cohort).expanduser()
    if not path.exists():
        raise CohortError(f"{path}: no such file or folder")
    if path.is_dir():
        found: dict[str, str] = {}
        for entry in sorted(path.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_file() and not entry.name.lower().endswith(EXPORT_SUFFIXES):
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
            raise CohortError(f"{path}: no exports (*.zip, *.xml or folders) in this folder")
        return dict(sorted(found.items()))
    return read_manifest(path)


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


def stat_signature(path: str) -> list:
    """What changes whenever a file's content can have changed: size, mtime, ctime and inode
    (ctime also moves on `touch -d`, `cp -p` and rename-over). The device number is left out
    because it differs between the hosts of a cluster that mount the same file system."""

    def one(p: str) -> list:
        st = os.stat(p)
        return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]

    if os.path.isdir(path):
        return [[rel, *one(os.path.join(path, rel))] for rel in _files_below(path)]
    return one(path)


def content_sha256(path: str) -> str:
    """SHA-256 of a file's bytes (the same value `healthetl run` writes as `input.sha256`), or for
    a folder `dir:` + the SHA-256 of every file's relative path and SHA-256, in path order."""
    if os.path.isdir(path):
        outer = hashlib.sha256()
        for rel in _files_below(path):
            outer.update(rel.encode() + b"\0" + _file_sha256(os.path.join(path, rel)).encode() + b"\n")
        return "dir:" + outer.hexdigest()
    return _file_sha256(path)


def _file_sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _files_below(root: str) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            found.append(os.path.relpath(os.path.join(folder, name), root))
    return found


def xml_bytes(path: str) -> int:
    """How many bytes of XML `healthetl run` will parse: a zip's largest member uncompressed
    (read from the central directory, nothing inflated), a folder's largest file, else the size."""
    try:
        if os.path.isdir(path):
            return max((os.path.getsize(os.path.join(path, rel)) for rel in _files_below(path)), default=0)
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                return max((info.file_size for info in archive.infolist()), default=0)
        return os.path.getsize(path)
    except (OSError, zipfile.BadZipFile):
        return os.path.getsize(path) if os.path.isfile(path) else 0


@dataclass
class KeyRefresh:
    hashed: list[str]  # participants whose export had to be read (new stat, no memo)
    changed: list[str]  # participants whose key file now asks for a rerun


def refresh_keys(participants: dict[str, str], state: str | os.PathLike = STATE_DIR) -> KeyRefresh:
    """Bring `<state>/keys/<id>.key` up to date; the participant rule's only Snakemake input.

    A key file is rewritten (new content and mtime, so Snakemake's mtime-then-checksum check
    reruns the job) only when the export's content differs from the content the participant's
    last job read, as recorded in its status file. Whether the content differs is decided by
    stat first: an export whose size, mtime, ctime and inode equal those the job saw is
    unchanged without reading a byte; otherwise its SHA-256 is computed here (and remembered in
    `<state>/fingerprints.json` against the new stat), so a `touch` costs one read and no
    rerun, while a replaced export reruns even when its mtime is older than the outputs.
    """
    state = Path(state)
    keys = state / "keys"
    keys.mkdir(parents=True, exist_ok=True)
    memo_path = state / "fingerprints.json"
    memo = load_json(memo_path) or {}
    memo_dirty = False
    result = KeyRefresh(hashed=[], changed=[])
    for pid, export in participants.items():
        key_path = keys / f"{pid}.key"
        status = load_json(state / "status" / f"{pid}.json")
        current_key = key_path.read_text() if key_path.exists() else None
        if status is None:
            # Never finished: the missing status file makes Snakemake run it anyway.
            if current_key is None:
                write_atomic(key_path, "new\n")
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
            result.hashed.append(pid)
        if sha != status.get("sha256"):
            if current_key != sha + "\n":
                write_atomic(key_path, sha + "\n")
                result.changed.append(pid)
        elif current_key is None:
            write_atomic(key_path, sha + "\n")
    stale = [pid for pid in memo if pid not in participants]
    for pid in stale:
        del memo[pid]
        memo_dirty = True
    if memo_dirty:
        write_atomic(memo_path, json.dumps(memo, indent=1, sort_keys=True) + "\n")
    return result


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
