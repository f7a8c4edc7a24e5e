#!/usr/bin/env python3
"""Keep the docs from drifting: every cited section exists, every relative link resolves.

Usage:
    python3 Tests/Tools/check_docs.py [REPO]     # exit 1 and one line per problem

Exit status: 0 clean, 1 problems found, 2 usage error.

What it checks, in every tracked source, test, build and Markdown file of the repository:

- Citations of a section: a Markdown file's repository path followed by the section's heading in
  double quotes, as comments and docs write them: `Pipelines/README.md, "Daily"`,
  `(Pipelines/report/DATA.md, "days")`, `README.md ("Exit codes")`, and lists that go on with
  more quoted headings (`Pipelines/README.md, "Swimming", "Routes", "Splits"` or `"A" and "B"`).
  The file must exist (its path from the repository's root, from the citing file's folder, or a
  bare name that only one Markdown file of the repository has) and have a heading whose text is
  the quoted one, backticks ignored, or begins with it followed by a parenthesis or a colon (`"Daily"` names
  `## Daily (\`"kind": "daily"\`)`).
- Relative links in Markdown: `[text](path)` and `[text](path#anchor)`, from the linking file's
  folder; the target must exist, and an anchor must be the GitHub slug of one of its headings.
  Links with a scheme (`https:`, `mailto:`) are not followed.
- Paths of the repository in Markdown code spans: `` `Sources/HealthETL/Mindful/` `` or
  `` `Tests/Tools/check_layers.py` `` must exist (a span that starts with a top-level folder of the
  repository: Sources, Tests, Pipelines, SampleData, .ci; spans with `<`, `*`, `{` or a space
  are patterns or commands, not paths).

A file that plants broken citations on purpose (the checker's own test) says `check_docs: planted`
and is passed over. A citation of a file that is not Markdown, or a quoted text after a `.md` path that is not meant
as a heading, can be written without the quotes right after the path.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SOURCE_SUFFIXES = {".swift", ".py", ".sh", ".md", ".c", ".h", ".yaml", ".json", ".html"}
SOURCE_NAMES = {"Makefile", "Snakefile", "run"}

# A Markdown path, then `, "Heading"` or ` ("Heading"` and any further `, "…"` / ` and "…"`.
CITATION = re.compile(
    r'(?P<path>(?:[\w.-]+/)*[\w.-]+\.md)`?'
    r'(?P<list>(?:,|\s\(|\s|,\s*\(|`,)\s*"[^"\n]{1,120}"(?:\s*(?:,|and|or)\s*"[^"\n]{1,120}")*)'
)
QUOTED = re.compile(r'"([^"\n]{1,120})"')
LINK = re.compile(r'(?<!!)\[[^\]\n]*\]\((?P<target>[^)\s]+)\)|!\[[^\]\n]*\]\((?P<image>[^)\s]+)\)')
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
REPO_PATH = re.compile(r"`((?:Sources|Tests|Pipelines|SampleData|\.ci)/[^`\s<>*{}]*)`")


def tracked_files(repo: Path) -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "ls-files", "--cached", "--others", "--exclude-standard"],
            capture_output=True, text=True, check=True,
        ).stdout
        names = [line for line in out.splitlines() if line]
    except (OSError, subprocess.CalledProcessError):
        names = [
            str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file() and ".build" not in p.parts
        ]
    return [repo / name for name in sorted(names) if (repo / name).is_file()]


def headings(path: Path, cache: dict[Path, list[str]]) -> list[str]:
    if path not in cache:
        found: list[str] = []
        fenced = False
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if fenced:
                continue
            match = HEADING.match(line)
            if match:
                found.append(match.group(2))
        cache[path] = found
    return cache[path]


def plain(text: str) -> str:
    return text.replace("`", "").strip()


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = plain(heading).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def check(repo: Path) -> list[str]:
    problems: list[str] = []
    cache: dict[Path, list[str]] = {}
    files = tracked_files(repo)
    markdown = [p for p in files if p.suffix == ".md"]
    for path in files:
        if path.suffix not in SOURCE_SUFFIXES and path.name not in SOURCE_NAMES:
            continue
        if "Fixtures" in path.parts or "golden" in path.parts or "Corpus" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if "check_docs: " + "planted" in text:
            continue
        rel = path.relative_to(repo)
        for match in CITATION.finditer(text):
            cited = repo / match.group("path")
            line = text.count("\n", 0, match.start()) + 1
            if not cited.is_file():
                # A path relative to the citing file (a README citing its neighbour), or a bare
                # name only one Markdown file has (`DATA.md`).
                beside = path.parent / match.group("path")
                named = [p for p in markdown if p.name == match.group("path")] if "/" not in match.group("path") else []
                if beside.is_file():
                    cited = beside
                elif len(named) == 1:
                    cited = named[0]
                else:
                    problems.append(f"{rel}:{line}: cites {match.group('path')}, which does not exist")
                    continue
            known = [plain(h) for h in headings(cited, cache)]
            for section in QUOTED.findall(match.group("list")):
                wanted = plain(section)
                if not any(h == wanted or h.startswith((wanted + " (", wanted + ":")) for h in known):
                    problems.append(
                        f"{rel}:{line}: cites section \"{section}\" of {cited.relative_to(repo)}, "
                        "which has no such heading"
                    )
        if path.suffix != ".md":
            continue
        fenced = False
        for number, line_text in enumerate(text.splitlines(), start=1):
            if line_text.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if fenced:
                continue
            for match in REPO_PATH.finditer(line_text):
                named = match.group(1).rstrip("/.,:;")
                if not (repo / named).exists():
                    problems.append(f"{rel}:{number}: names {named}, which does not exist")
            for match in LINK.finditer(line_text):
                target = match.group("target") or match.group("image")
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("<"):
                    continue
                file_part, _, anchor = target.partition("#")
                linked = (path.parent / file_part).resolve() if file_part else path
                if not linked.exists():
                    problems.append(f"{rel}:{number}: links to {target}, which does not exist")
                    continue
                if anchor and linked.is_file() and linked.suffix == ".md":
                    if anchor not in {slug(h) for h in headings(linked, cache)}:
                        problems.append(
                            f"{rel}:{number}: links to {target}: {file_part or rel.name} has no heading "
                            f"with the anchor #{anchor}"
                        )
    return problems


def main(argv: list[str]) -> int:
    if len(argv) > 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    repo = Path(argv[1] if len(argv) == 2 else Path(__file__).resolve().parents[2]).resolve()
    if not repo.is_dir():
        print(f"check_docs: {repo} is not a folder", file=sys.stderr)
        return 2
    problems = check(repo)
    for problem in problems:
        print(problem)
    print(f"check_docs: {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
