"""The gallery: the default pipeline on every `healthetl sample --profile` and every real export
in ../shared/fixtures/real, for the checks of test_gallery.py and the screenshots of `make gallery`.

    python3 Tests/EndToEnd/gallery.py --out .build/gallery     # outputs and screenshots per export

The binary is `e2e.binary()`: `HEALTHETL_BIN` (`make gallery` sets the release build), else the release
build, else the debug build.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, real_fixtures  # noqa: E402

REAL = real_fixtures()
PROFILES = ("watch", "iphone-sleep-apps", "sleep-apps-oddities", "garmin", "ios10", "ios8", "multisport",
            "third-party-workouts", "food-glucose-bp")
# Screen widths the report is looked at: a laptop and a phone.
WIDTHS = {"desktop": 1280, "phone": 390}
RENDERED = "document.documentElement.dataset.chartsDrawn || document.documentElement.dataset.reportError"


@dataclass
class Export:
    name: str  # a file-name-safe label: `profile-garmin`, `real-bwassim__Health-Data-Analysis-export`
    path: Path


def real_exports() -> list[Export]:
    """Every whole export among the real fixtures: each zip, and each XML file holding a
    `<HealthData` root that is not the CDA document (fragments without a root are not exports)."""
    if not REAL.is_dir():
        return []
    found = []
    for path in sorted(REAL.rglob("*")):
        if not path.is_file() or "workout-routes" in path.parts:
            continue
        if path.suffix.lower() == ".zip":
            found.append(path)
        elif path.suffix.lower() == ".xml" and path.name != "export_cda.xml":
            with path.open("rb") as file:
                if b"<HealthData" in file.read(1 << 16):
                    found.append(path)
    exports = []
    for path in found:
        relative = path.relative_to(REAL)
        label = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{relative.parts[0]}-{path.stem}")
        exports.append(Export(f"real-{label}", path))
    # Two files of one repository may share a stem (export.xml and export.zip): keep labels unique.
    seen: dict[str, int] = {}
    for export in exports:
        seen[export.name] = seen.get(export.name, 0) + 1
        if seen[export.name] > 1:
            export.name += f"-{seen[export.name]}"
    return exports


def make_profiles(folder: Path) -> list[Export]:
    """Four weeks of each profile, seed 1, as export.zip."""
    exports = []
    for profile in PROFILES:
        path = folder / f"profile-{profile}.zip"
        if not path.exists():
            subprocess.run([binary(), "sample", "--profile", profile, "--days", "28", "--seed", "1", "--zip",
                            "--out", str(path)], check=True, capture_output=True, timeout=600)
        exports.append(Export(f"profile-{profile}", path))
    return exports


def run_default(export: Export, out: Path) -> subprocess.CompletedProcess:
    """The default pipeline, as `make run` does; test_gallery.py requires exit 0 of every export."""
    return subprocess.run([binary(), "run", "--quiet", "--tz", "auto", "--out", str(out), str(export.path)],
                          capture_output=True, text=True, timeout=600)


def screenshots(html: Path, folder: Path, name: str, browser) -> list[Path]:
    """The whole report at each width, as `<name>-desktop.png` and `<name>-phone.png`."""
    written = []
    for label, width in WIDTHS.items():
        page = browser.open(html, width=width, height=900)
        try:
            page.wait_for(RENDERED, timeout=60)
            path = folder / f"{name}-{label}.png"
            path.write_bytes(page.screenshot(full_page=True))
            written.append(path)
        finally:
            page.close()
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / ".build" / "gallery")
    arguments = parser.parse_args()
    from chromium import Browser

    arguments.out.mkdir(parents=True, exist_ok=True)
    (arguments.out / "exports").mkdir(exist_ok=True)
    # The bundled sample first: its desktop screenshot is the README's picture (`make readme-picture`).
    exports = [Export("sample", REPO / "SampleData" / "export.zip")] + make_profiles(arguments.out / "exports")
    if not REAL.is_dir():
        print(f"gallery: {REAL} is absent: only the sample profiles", file=sys.stderr)
    exports += real_exports()
    with Browser() as browser:
        for export in exports:
            out = arguments.out / "outputs" / export.name
            result = run_default(export, out)
            html = out / "report.html"
            if not html.exists():
                print(f"{export.name}: no report (exit {result.returncode}: {result.stderr.strip()[:200]})")
                continue
            for path in screenshots(html, arguments.out, export.name, browser):
                print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
