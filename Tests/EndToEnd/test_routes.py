"""Laps, routes and splits end to end: the real binary over the bundled sample and over copies of
it with bad route files (Pipelines/docs/workouts.md, "Swimming", "Routes", "Splits").

The golden files in Tests/EndToEnd/golden/routes/ are the workouts pipeline's outputs for
SampleData/export.zip. After an intended change, regenerate them with
`HEALTHETL_UPDATE_GOLDEN=1 make test-e2e` and review the diff.

The binary is `e2e.binary()`: `HEALTHETL_BIN` (set by `make test-e2e`), else the release build, else
the debug build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows  # noqa: E402

SAMPLE = REPO / "SampleData" / "export.zip"
GOLDEN = REPO / "Tests" / "EndToEnd" / "golden" / "routes"
FILES = ["workouts.csv", "swim_laps.csv", "route_points.csv", "workout_splits.csv"]


def run(export: Path, out: Path) -> dict:
    result = subprocess.run(
        [binary(), "run", "--quiet", "--pipeline", str(REPO / "Pipelines" / "workouts.json"), "--out", str(out), str(export)],
        capture_output=True, text=True, timeout=300,
    )
    if result.returncode != 0:
        raise AssertionError(f"healthetl failed ({result.returncode}): {result.stderr}")
    return json.loads((out / "run.json").read_text())


class RoutesEndToEnd(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="healthetl-routes-"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_sample_matches_golden(self):
        out = self.tmp / "out"
        report = run(SAMPLE, out)
        if os.environ.get("HEALTHETL_UPDATE_GOLDEN"):
            GOLDEN.mkdir(parents=True, exist_ok=True)
            for name in FILES:
                shutil.copy(out / name, GOLDEN / name)
        for name in FILES:
            self.assertEqual((out / name).read_bytes(), (GOLDEN / name).read_bytes(), f"{name} differs from the golden file")
        with zipfile.ZipFile(SAMPLE) as z:
            gpx = [n for n in z.namelist() if n.startswith("apple_health_export/workout-routes/") and n.endswith(".gpx")]
            trkpts = sum(z.read(n).count(b"<trkpt ") for n in gpx)
        routes = report["routes"]
        self.assertEqual(routes["files"], len(gpx))
        self.assertEqual(routes["points"], trkpts)
        self.assertEqual(routes["unreferencedFiles"] + routes["missingFiles"] + routes["brokenFiles"], 0)
        self.assertEqual(len(csv_rows(out / "route_points.csv")), trkpts)

    def test_sample_splits_lie_inside_their_workout_and_add_up_to_its_distance(self):
        """Each workout's km and mi splits (not the Watch's) lie inside it and add up to its distance_m —
        once 5,699 m of route splits for the 5,160.46 m run; pace × distance is the moving time."""
        out = self.tmp / "out"
        run(SAMPLE, out)
        workouts = {w["id"]: w for w in csv_rows(out / "workouts.csv")}
        by_unit: dict[tuple[str, str], list[dict]] = {}
        for split in csv_rows(out / "workout_splits.csv"):
            if split["from"] != "watch":
                by_unit.setdefault((split["workout_id"], split["unit"]), []).append(split)
        self.assertEqual(len({workout_id for workout_id, _ in by_unit}), 11)
        for (workout_id, unit), splits in by_unit.items():
            workout = workouts[workout_id]
            total = sum(float(s["distance_m"]) for s in splits)
            self.assertAlmostEqual(total, float(workout["distance_m"]), delta=1e-3, msg=f"{workout_id} {unit}")
            length = 1000 if unit == "km" else 1609.344
            self.assertTrue(all(float(s["distance_m"]) == length for s in splits[:-1]))
            start, end = datetime.fromisoformat(workout["start"]), datetime.fromisoformat(workout["end"])
            for s in splits:
                self.assertTrue(start <= datetime.fromisoformat(s["start"]) <= datetime.fromisoformat(s["end"]) <= end)
                self.assertLessEqual(float(s["speed_m_s"]), 100)
                self.assertAlmostEqual(
                    float(s["pace_s"]) * float(s["distance_m"]) / length, float(s["duration_s"]), delta=1e-3)
        run_of_5160 = [s for s in by_unit[("8EBAA60B-7356-5A7D-8D41-4E356E4843A0", "km")]]
        self.assertEqual([s["from"] for s in run_of_5160], ["distance"] * 6)
        self.assertEqual(run_of_5160[-1]["distance_m"], "160.46")
        # Cut from the distance samples, the kilometres take their elevation from the route.
        gain = sum(float(s["elevation_gain_m"]) for s in run_of_5160)
        self.assertAlmostEqual(
            gain, float(workouts["8EBAA60B-7356-5A7D-8D41-4E356E4843A0"]["route_elevation_gain_m"]), delta=1e-3)

    def test_bad_route_files_are_reported_not_fatal(self):
        """A copy of the sample with one route missing, one cut short, one not GPX and one no workout names."""
        broken_zip = self.tmp / "export.zip"
        with zipfile.ZipFile(SAMPLE) as source, zipfile.ZipFile(broken_zip, "w", zipfile.ZIP_DEFLATED) as target:
            names = sorted(n for n in source.namelist() if n.startswith("apple_health_export/workout-routes/"))
            missing, cut, kml = names[0], names[1], names[2]
            for name in source.namelist():
                data = source.read(name)
                if name == missing:
                    continue
                if name == cut:
                    data = data[: data.index(b"</trkpt>", len(data) // 2)]
                if name == kml:
                    data = b'<?xml version="1.0"?>\n<kml><Placemark/></kml>\n'
                target.writestr(name, data)
            target.writestr("apple_health_export/workout-routes/route_orphan.gpx", (
                '<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1"><trk><trkseg>\n'
                '<trkpt lat="52.5" lon="13.4"><time>2024-03-20T10:00:00Z</time></trkpt>\n'
                '<trkpt lat="52.51" lon="13.4"><time>2024-03-20T10:01:00Z</time></trkpt>\n'
                "</trkseg></trk></gpx>\n"))
            cut_lines = source.read(cut)[: source.read(cut).index(b"</trkpt>", len(source.read(cut)) // 2)].count(b"\n") + 1
        out = self.tmp / "out"
        report = run(broken_zip, out)["routes"]
        self.assertEqual(report["missingFiles"], 1)
        self.assertEqual(report["brokenFiles"], 2)
        self.assertEqual(report["unreferenced"], ["workout-routes/route_orphan.gpx"])
        problems = {p["file"]: p["problem"] for p in report["problems"]}
        short = lambda name: name.removeprefix("apple_health_export/")
        self.assertEqual(problems[short(missing)], "missing: the export holds no such file")
        self.assertEqual(problems[short(kml)], "not a GPX file: its root element is <kml>")
        self.assertRegex(problems[short(cut)], rf"^cut short at line {cut_lines}: ")
        self.assertTrue(all("\n" not in p for p in problems.values()))
        workouts = csv_rows(out / "workouts.csv")
        flagged = [w["route_problems"] for w in workouts if w["route_problems"]]
        self.assertEqual(len(flagged), 3)
        points = csv_rows(out / "route_points.csv")
        orphan = [p for p in points if p["file"] == "workout-routes/route_orphan.gpx"]
        self.assertEqual([p["workout_id"] for p in orphan], ["", ""])

    def test_huge_route_file_streams(self):
        """One 400,000-point GPX beside a bare export.xml: every point read, memory well below the file's size."""
        folder = self.tmp / "export"
        (folder / "workout-routes").mkdir(parents=True)
        with zipfile.ZipFile(SAMPLE) as z:
            (folder / "export.xml").write_bytes(z.read("apple_health_export/export.xml"))
        count = 400_000
        with open(folder / "workout-routes" / "huge.gpx", "w") as f:
            f.write('<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1"><trk><trkseg>\n')
            line = ('<trkpt lon="13.{i:06d}" lat="52.{i:06d}"><ele>34.{i:06d}</ele><time>2024-03-20T10:00:00Z</time>'
                    "<extensions><speed>3.1</speed><course>12.5</course><hAcc>4.2</hAcc><vAcc>2.1</vAcc></extensions></trkpt>\n")
            for i in range(count):
                f.write(line.format(i=i % 1_000_000))
            f.write("</trkseg></trk></gpx>\n")
        size_mb = (folder / "workout-routes" / "huge.gpx").stat().st_size / 1e6
        out = self.tmp / "out"
        small = self.tmp / "small"
        (small / "workout-routes").mkdir(parents=True)
        shutil.copy(folder / "export.xml", small / "export.xml")
        baseline = run(small / "export.xml", self.tmp / "out-small")["peakMemoryMB"]
        report = run(folder / "export.xml", out)
        self.assertEqual(report["routes"]["points"], count)
        self.assertEqual(report["routes"]["unreferenced"], ["workout-routes/huge.gpx"])
        # Streaming: the peak grows by far less than the file (about 70 MB) would need held.
        self.assertLess(report["peakMemoryMB"] - baseline, size_mb / 4, f"peak {report['peakMemoryMB']} MB vs {baseline} MB")


    def export_folder(self, routes: list[str], start="2024-03-20 10:00:00 +0000", end="2024-03-20 10:30:00 +0000") -> Path:
        """A folder export: one run naming each of `routes` under workout-routes/."""
        folder = self.tmp / "export"
        (folder / "workout-routes").mkdir(parents=True)
        refs = "".join(f'<WorkoutRoute sourceName="Watch"><FileReference path="/workout-routes/{name}"/></WorkoutRoute>\n'
                       for name in routes)
        (folder / "export.xml").write_text(
            '<?xml version="1.0" encoding="UTF-8"?>\n<HealthData locale="en_US">\n'
            '<ExportDate value="2024-03-21 09:00:00 +0000"/>\n'
            f'<Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" durationUnit="min" '
            f'sourceName="Watch" startDate="{start}" endDate="{end}">\n{refs}</Workout>\n</HealthData>\n')
        return folder

    @staticmethod
    def gpx(points: list[tuple[float, float, int]]) -> str:
        lines = "".join(f'<trkpt lat="{lat}" lon="{lon}"><time>2024-03-20T10:{s // 60:02d}:{s % 60:02d}Z</time></trkpt>\n'
                        for lat, lon, s in points)
        return f'<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1"><trk><trkseg>\n{lines}</trkseg></trk></gpx>\n'

    def test_points_round_the_world_give_bounded_outputs(self):
        """1,000 points alternating between (0, 0) and (0, 180), one a second (100 such points once gave
        505 MB of splits and 1.17 GB of memory): every (0, 180) is a 20,015 km jump in 1 s, dropped; the
        500 points at (0, 0) measure 0 m, so no split."""
        folder = self.export_folder(["round.gpx"])
        baseline = run(folder / "export.xml", self.tmp / "out-empty")["peakMemoryMB"]
        (folder / "workout-routes" / "round.gpx").write_text(
            self.gpx([(0, 0 if i % 2 == 0 else 180, i) for i in range(1000)]))
        out = self.tmp / "out"
        report = run(folder / "export.xml", out)
        self.assertEqual(report["routes"]["points"], 500)
        self.assertEqual(report["routes"]["droppedPoints"], 500)
        self.assertEqual(report["routes"]["dropped"], {"jump": 500})
        self.assertEqual((out / "workout_splits.csv").read_text().count("\n"), 1)
        self.assertEqual(len(csv_rows(out / "route_points.csv")), 500)
        self.assertEqual(
            csv_rows(out / "workouts.csv")[0]["route_problems"],
            "workout-routes/round.gpx: dropped 500 of 1000 points: a jump faster than 100 m/s ×500 (first at line 4)")
        # Memory follows the data: the same as without the file, give or take the allocator.
        self.assertLess(report["peakMemoryMB"] - baseline, 30, f"peak {report['peakMemoryMB']} MB vs {baseline} MB")

    def test_links_out_of_the_export_are_not_followed(self):
        """workout-routes/ holds links to a GPX file outside the export folder, to /dev/zero, to a FIFO and
        to /etc/passwd, and a FIFO of its own: none is opened (a FIFO opened for reading would wait for a
        writer: the timeout only turns such a hang into a failure); each is a broken route file with the
        reason; the run succeeds, as bad route files never fail it."""
        names = ["outside.gpx", "zero.gpx", "fifo.gpx", "passwd.gpx", "pipe.gpx"]
        folder = self.export_folder(names)
        outside = self.tmp / "outside"
        outside.mkdir()
        (outside / "secret.gpx").write_text(self.gpx([(66.6, 6.6, 0), (66.6001, 6.6, 1)]))
        os.mkfifo(outside / "fifo")
        routes = folder / "workout-routes"
        os.symlink(outside / "secret.gpx", routes / "outside.gpx")
        os.symlink("/dev/zero", routes / "zero.gpx")
        os.symlink(outside / "fifo", routes / "fifo.gpx")
        os.symlink("/etc/passwd", routes / "passwd.gpx")
        os.mkfifo(routes / "pipe.gpx")
        out = self.tmp / "out"
        report = run(folder / "export.xml", out)["routes"]
        self.assertEqual(report["files"], 5)
        self.assertEqual(report["brokenFiles"], 5)
        self.assertEqual(report["points"], 0)
        link = "cannot be read: a symbolic link (links inside an export folder are not followed)"
        self.assertEqual({p["file"]: p["problem"] for p in report["problems"]}, {
            "workout-routes/outside.gpx": link, "workout-routes/zero.gpx": link, "workout-routes/fifo.gpx": link,
            "workout-routes/passwd.gpx": link, "workout-routes/pipe.gpx": "cannot be read: a FIFO, not a file (never opened)"})
        self.assertEqual(csv_rows(out / "route_points.csv"), [])
        self.assertEqual(csv_rows(out / "workouts.csv")[0]["route_problems"].count(";"), 4)

    def test_the_main_file_is_never_a_link_or_a_fifo_inside_the_folder(self):
        """export.xml a FIFO inside the folder once hung the run for good; a link named export.xml is not
        followed either. Both: exit 65 at once, saying why; the folder itself may be a link."""
        folder = self.tmp / "fifo-export"
        folder.mkdir()
        os.mkfifo(folder / "export.xml")
        result = subprocess.run([binary(), "run", "--quiet", "--out", str(self.tmp / "out"), str(folder)],
                                capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 65, result.stderr)
        self.assertIn("not opened: export.xml, a FIFO, not a file (never opened)", result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1)
        linked = self.export_folder([])
        os.symlink(linked, self.tmp / "linked-folder")
        run(self.tmp / "linked-folder", self.tmp / "out-linked")

    def test_nightly_follows_links_to_regular_exports_only(self):
        """An inbox holding a link to the sample export (processed: the inbox is the user's), a FIFO named
        like an export and a link to /dev/zero (both passed over unopened: the night does not wait)."""
        inbox = self.tmp / "inbox"
        inbox.mkdir()
        os.symlink(SAMPLE, inbox / "a.zip")
        os.mkfifo(inbox / "b.zip")
        os.symlink("/dev/zero", inbox / "c.zip")
        out = self.tmp / "out"
        result = subprocess.run(
            [binary(), "nightly", "--inbox", str(inbox), "--out", str(out),
             "--pipeline", str(REPO / "Pipelines" / "workouts.json")],
            capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        night = json.loads((out / "run.json").read_text())["nightly"]
        self.assertEqual(night["processed"], ["a.zip"])
        self.assertEqual(night["quarantined"], [])


if __name__ == "__main__":
    unittest.main()
