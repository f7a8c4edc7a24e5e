"""Every command in README.md's code blocks is run, so the README cannot drift from the product.

A `make` command is run as written, on the bundled sample: a path of the reader's own
(`EXPORT=~/Downloads/export.zip`, `INBOX=/srv/health/inbox`) is replaced by the sample or a
temporary folder, `OUT` always goes to a temporary folder, and the binary is the one under test
(`make -o release -o deps … RELEASE_BIN=…`: the targets' recipes, without rebuilding). The two
commands that set up everything (`make test`, the suite itself) and the cohort, whose workflow has
its own tests (`test_cohort.py`), are checked to be targets `make -n` accepts. A `healthetl`
command runs the binary under test from the repository's root, with `export.zip` the sample and
`out` a temporary folder; `deliver` is run with `--dry-run` (the server it names is the reader's).
A command the test does not know how to run fails it: a new command in the README needs a line
here.
"""

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from e2e import REPO, binary

SAMPLE = REPO / "SampleData" / "export.zip"
RUNNABLE = {"run", "sleep", "workouts", "stats", "samples", "inspect", "nightly"}
DRY_RUN_ONLY = {"test", "cohort", "serve"}


def readme_commands() -> list[str]:
    """The command lines of README.md's `sh` and `cron` blocks, comments removed."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"```(?:sh|cron)\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def make_words(command: str) -> list[str]:
    """`make TARGET VAR=…` of a command line (a crontab line runs `cd … && make …`)."""
    words = shlex.split(command)
    if "make" not in words:
        raise AssertionError(f"README.md shows a command this test cannot run: {command!r}")
    return words[words.index("make") + 1 :]


def is_healthetl(command: str) -> bool:
    return shlex.split(command)[0] == "healthetl"


class ReadmeCommandsTests(unittest.TestCase):
    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.tmp = Path(folder.name)

    def run_make(self, words: list[str], dry: bool = False) -> subprocess.CompletedProcess:
        prefix = ["make", "-n"] if dry else ["make", "--no-print-directory", "-o", "release", "-o", "deps"]
        return subprocess.run(
            prefix + words + [f"RELEASE_BIN={binary()}"],
            cwd=REPO, capture_output=True, text=True, timeout=600,
        )

    def run_healthetl(self, command: str):
        words = shlex.split(command)[1:]
        out = self.tmp / "healthetl-out"
        words = [str(SAMPLE) if w == "export.zip" else str(out) if w == "out" else w for w in words]
        if words[0] == "deliver":
            words.append("--dry-run")
        result = subprocess.run([binary(), *words], cwd=REPO, capture_output=True, text=True, timeout=600)
        self.assertEqual(result.returncode, 0, f"{command}: {result.stderr}")
        if words[0] == "run":
            self.assertTrue((out / "run.json").is_file(), f"{command}: no run.json")

    def test_the_readme_shows_commands(self):
        targets = {make_words(c)[0] for c in readme_commands() if not is_healthetl(c)}
        self.assertTrue({"run", "test", "inspect", "nightly", "cohort"} <= targets, targets)

    def test_every_command_runs_on_the_bundled_sample(self):
        for number, command in enumerate(readme_commands()):
            if is_healthetl(command):
                with self.subTest(command=command):
                    self.run_healthetl(command)
                continue
            words = make_words(command)
            target, settings = words[0], dict(w.split("=", 1) for w in words[1:] if "=" in w)
            with self.subTest(command=command):
                if target in DRY_RUN_ONLY:
                    if target == "cohort":
                        settings.update(COHORT=str(self.tmp), OUT=str(self.tmp / "cohort"))
                    result = self.run_make([target, *(f"{k}={v}" for k, v in settings.items())], dry=True)
                    self.assertEqual(result.returncode, 0, result.stderr)
                    continue
                self.assertIn(target, RUNNABLE, f"README.md runs `make {target}`, which this test does not know")
                out = self.tmp / f"out-{number}"
                settings["OUT"] = str(out)
                if "EXPORT" in settings:
                    settings["EXPORT"] = str(SAMPLE)
                if target == "nightly":
                    inbox = self.tmp / f"inbox-{number}"
                    inbox.mkdir()
                    shutil.copy(SAMPLE, inbox / "export.zip")
                    settings["INBOX"] = str(inbox)
                result = self.run_make([target, *(f"{k}={v}" for k, v in settings.items())])
                self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
                if target == "inspect":
                    self.assertIn("Time zone   Europe/Berlin", result.stdout)
                    continue
                self.assertTrue((out / "run.json").is_file(), f"{command}: no run.json in OUT")
                if target == "run":
                    for name in ("report.html", "health.xlsx", "health.sqlite", "daily.csv"):
                        self.assertTrue((out / name).is_file(), f"{command}: no {name}")
                if target == "sleep":
                    self.assertTrue((out / "sleep_daily.csv").is_file())
                if target == "nightly":
                    self.assertTrue((out / "workout_records.new.json").is_file())


if __name__ == "__main__":
    unittest.main()
