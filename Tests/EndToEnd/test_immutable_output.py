"""An immutable or append-only entry in the output folder (`chattr +i`, `chattr +a`) stops a run
before anything changes, says which entry and what to do, and leaves no staging folder.

A run replaces the output folder's files: after the swap it removes the previous folder, and
when it renames files into the folder it replaces them. Before, an immutable file there could
not be removed, so the previous folder stayed behind as `.out.healthetl-staging-<pid>` beside the
output folder, with exit 0 and not a word; from inside the folder a rename refused part-way left
old and new files mixed. Now each case exits 73 naming the entry, the folder holds the previous
outputs byte for byte, and no staging folder is left.

Setting the flags takes root (CAP_LINUX_IMMUTABLE) and a file system that keeps them (ext4, xfs,
btrfs; not tmpfs or overlayfs): the test tries on a scratch file first and skips, saying which,
where it cannot.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary  # noqa: E402

PIPELINE = str(REPO / "Pipelines/default.json")


def chattr(flags: str, *paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["chattr", flags, *map(str, paths)], capture_output=True, text=True, timeout=60)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


class ImmutableOutputTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Beside the build, on the checkout's file system: /tmp may be a tmpfs, which keeps no flags.
        build = REPO / ".build"
        cls.tmp = tempfile.TemporaryDirectory(dir=build if build.is_dir() else None)
        cls.root = Path(cls.tmp.name)
        if shutil.which("chattr") is None:
            raise unittest.SkipTest("chattr is missing (Debian: e2fsprogs)")
        probe = cls.root / "probe"
        probe.write_text("probe")
        tried = chattr("+i", probe)
        if tried.returncode != 0:
            kind = subprocess.run(["stat", "-f", "-c", "%T", str(cls.root)], capture_output=True, text=True).stdout
            raise unittest.SkipTest(
                f"chattr +i does not work here ({kind.strip()} file system at {cls.root}; needs root and a file "
                f"system that keeps the flag, such as ext4): {tried.stderr.strip()}")
        chattr("-i", probe)
        probe.unlink()
        cls.export = cls.root / "export.zip"
        subprocess.run([binary(), "sample", "--days", "7", "--seed", "3", "--zip", "--out", str(cls.export)],
                       check=True, capture_output=True, timeout=300)

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["chattr", "-R", "-i", "-a", str(cls.root)], capture_output=True, timeout=60)
        cls.tmp.cleanup()

    def run_into(self, out: Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([binary(), "run", "--pipeline", PIPELINE, "--quiet", "--tz", "UTC", "--no-workbook",
                               "--out", str(out), str(self.export)], capture_output=True, text=True, timeout=300,
                              cwd=cwd)

    def check_refused(self, name: str, flag: str, entry: str, inside: bool = False) -> None:
        out = self.root / name
        first = self.run_into(out)
        self.assertEqual(first.returncode, 0, first.stderr)
        (out / "notes.txt").write_text("the user's own notes\n")
        target = out / entry
        self.assertEqual(chattr(flag, target).returncode, 0)
        self.addCleanup(chattr, flag.replace("+", "-"), target)
        before = snapshot(out)
        refused = self.run_into(Path(".") if inside else out, cwd=out if inside else None)
        self.assertEqual(refused.returncode, 73, refused.stderr)
        self.assertIn(f"{entry}: it is immutable or append-only (chattr +i or +a)", refused.stderr)
        self.assertIn("nothing was changed", refused.stderr)
        self.assertEqual(list(self.root.glob(f".{name}.healthetl-staging-*")), [], "a staging folder was left")
        self.assertEqual(snapshot(out), before)
        # Once the flag is cleared the next run goes through, and keeps the user's file.
        self.assertEqual(chattr(flag.replace("+", "-"), target).returncode, 0)
        again = self.run_into(out)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual((out / "notes.txt").read_text(), "the user's own notes\n")
        self.assertEqual(list(self.root.glob(f".{name}.healthetl-staging-*")), [])

    def test_an_immutable_file_the_run_keeps(self):
        self.check_refused("keeps", "+i", "notes.txt")

    def test_an_immutable_file_the_run_rewrites(self):
        self.check_refused("rewrites", "+i", "daily.csv")

    def test_an_append_only_file_when_run_from_inside_the_folder(self):
        self.check_refused("inside", "+a", "stats/steps-per-day.csv", inside=True)

    def test_an_immutable_subfolder(self):
        self.check_refused("subfolder", "+i", "stats")


if __name__ == "__main__":
    unittest.main()
