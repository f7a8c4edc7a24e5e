"""The docs checker (Tests/Tools/check_docs.py) on planted trees and on the repository itself,
as `make lint` runs it. (check_docs: planted — the citations below are broken on purpose.)"""

import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECKER = REPO / "Tests" / "Tools" / "check_docs.py"


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(CHECKER), str(root)], capture_output=True, text=True, timeout=120
    )


class DocsCheckerTests(unittest.TestCase):
    def tree(self, files: dict[str, str]) -> Path:
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        root = Path(folder.name)
        for name, text in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return root

    def test_the_repository_has_no_broken_citation_or_link(self):
        result = check(REPO)
        self.assertEqual((result.returncode, result.stdout), (0, ""), result.stderr)

    def test_planted_broken_citations_and_links_are_each_reported(self):
        root = self.tree(
            {
                "Docs/guide.md": """
                # Guide
                ## Sleep jobs (`"kind": "sleep"`)
                ## `run.json` and friends
                See [the notes](notes.md), [a part](#sleep-jobs-kind-sleep) and [gone](missing.md).
                An anchor that is not there: [x](#no-such-heading).
                A path that is there, `Sources/a.swift`, one that is not, `Sources/gone.swift`,
                and a pattern, `Sources/<Subject>/`.
                """,
                "Docs/notes.md": "# Notes\n",
                "Sources/a.swift": """
                // Fine: (Docs/guide.md, "Sleep jobs"), Docs/guide.md, "`run.json` and friends".
                // Broken: (Docs/guide.md, "Daily") and (Docs/nowhere.md, "Sleep jobs").
                // A list, one broken: (Docs/guide.md, "Sleep jobs", "Swimming").
                // A bare name only one file has: notes.md, "Notes".
                """,
            }
        )
        result = check(root)
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertEqual(
            result.stdout.splitlines(),
            [
                "Docs/guide.md:4: links to missing.md, which does not exist",
                "Docs/guide.md:5: links to #no-such-heading: guide.md has no heading with the anchor #no-such-heading",
                "Docs/guide.md:6: names Sources/gone.swift, which does not exist",
                'Sources/a.swift:2: cites section "Daily" of Docs/guide.md, which has no such heading',
                "Sources/a.swift:2: cites Docs/nowhere.md, which does not exist",
                'Sources/a.swift:3: cites section "Swimming" of Docs/guide.md, which has no such heading',
            ],
        )


if __name__ == "__main__":
    unittest.main()
