"""`healthetl deliver --influx` and `nightly --influx` against a real InfluxDB 1.x: Debian's
`influxd` (`make influxdb`), started here on a free 127.0.0.1 port with its own configuration and
folders in a temporary directory, HTTP only, reporting off, stopped by its PID. What was written
is read back with InfluxQL over HTTP (Pipelines/influx/README.md).

The sample (SampleData/export.zip) runs with the default, samples and influx pipelines, so each
measurement's points can be counted against the CSV rows of the same run."""

from __future__ import annotations

import json
import re
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request
import zipfile
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows  # noqa: E402

ZONE = "Europe/Paris"
DATABASE = "health"
LOOKBACK = 2 * 86_400  # InfluxDelivery.lookback


def influxd() -> str:
    """`INFLUXD`, else `influxd` on the PATH, else the copy `make influxdb` unpacks into .build."""
    named = os.environ.get("INFLUXD")
    if named:
        return named
    found = shutil.which("influxd")
    if found:
        return found
    unpacked = REPO / ".build/influxdb/usr/bin/influxd"
    if unpacked.is_file():
        return str(unpacked)
    raise unittest.SkipTest("needs Debian's influxd: make influxdb (or INFLUXD=path)")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class InfluxServer:
    """One influxd of its own, in `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        config = root / "influxdb.conf"
        config.write_text(
            f"""reporting-disabled = true
bind-address = "127.0.0.1:{free_port()}"
[meta]
  dir = "{root}/meta"
  logging-enabled = false
[data]
  dir = "{root}/data"
  wal-dir = "{root}/wal"
  query-log-enabled = false
[retention]
  enabled = false
[monitor]
  store-enabled = false
[subscriber]
  enabled = false
[continuous_queries]
  enabled = false
[http]
  enabled = true
  bind-address = "127.0.0.1:{self.port}"
  auth-enabled = false
  log-enabled = false
[logging]
  level = "warn"
""",
            encoding="utf-8",
        )
        self.log = open(root / "influxd.log", "wb")
        self.process = subprocess.Popen(
            [influxd(), "run", "-config", str(config)], stdout=self.log, stderr=subprocess.STDOUT,
            env={"PATH": os.environ.get("PATH", ""), "HOME": str(root)},
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{self.base}/ping", timeout=2) as answer:
                    if answer.status == 204:
                        break
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError("influxd did not start: " + (root / "influxd.log").read_text(errors="replace"))
            time.sleep(0.2)
        self.query(f"CREATE DATABASE {DATABASE}", post=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def write_url(self) -> str:
        return f"{self.base}/write?db={DATABASE}"

    def query(self, text: str, post: bool = False) -> list[dict]:
        """The statement's series (each `name`, `columns`, `values`, maybe `tags`), times in seconds."""
        arguments = urllib.parse.urlencode({"db": DATABASE, "q": text, "epoch": "s"})
        request = (
            urllib.request.Request(f"{self.base}/query", data=arguments.encode(), method="POST")
            if post
            else urllib.request.Request(f"{self.base}/query?{arguments}")
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            result = json.load(answer)["results"][0]
        if "error" in result:
            raise AssertionError(f"{text}: {result['error']}")
        return result.get("series", [])

    def points(self) -> dict[str, int]:
        """Points per measurement: rows of `SELECT *`, which has one row per series and time
        (grouped by every tag, so no two points fold into one row)."""
        counts = {}
        for series in self.query("SHOW MEASUREMENTS"):
            for (name,) in series["values"]:
                quoted = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
                rows = self.query(f"SELECT * FROM {quoted} GROUP BY *")
                counts[name] = sum(len(s["values"]) for s in rows)
        return counts

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)
        self.log.close()


def run(*arguments: str, expect: int = 0) -> subprocess.CompletedProcess:
    result = subprocess.run([binary(), *arguments], capture_output=True, text=True, timeout=300)
    if result.returncode != expect:
        raise AssertionError(f"healthetl {' '.join(arguments)}: exit {result.returncode}\n{result.stderr}")
    return result


def lines(path: Path) -> list[tuple[str, int]]:
    """(measurement as written, seconds) of every point of an influx.lp HealthETL wrote: the
    measurement ends at the first unescaped comma or space, the time is the last word."""
    points = []
    for line in path.read_bytes().split(b"\n"):
        if not line:
            continue
        end, escaped = 0, False
        for end, byte in enumerate(line):
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte in (0x2C, 0x20):
                break
        name = line[:end].replace(b"\\,", b",").replace(b"\\ ", b" ").replace(b"\\\\", b"\\")
        points.append((name.decode(), int(line.rsplit(b" ", 1)[1])))
    return points


class InfluxTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        influxd()
        binary()
        cls.temporary = tempfile.TemporaryDirectory(prefix="healthetl-influx-")
        cls.root = Path(cls.temporary.name)
        cls.server = InfluxServer(cls.root / "influxdb")
        cls.out = cls.root / "out"
        pipelines = ["--pipeline", "default", "--pipeline", "samples", "--pipeline", str(REPO / "Pipelines/influx.json")]
        run("run", *pipelines, "--tz", ZONE, "--no-workbook", "--out", str(cls.out), str(REPO / "SampleData/export.zip"))
        started = time.monotonic()
        run("deliver", "--out", str(cls.out), "--influx", cls.server.write_url)
        cls.seconds = time.monotonic() - started
        report = json.loads((cls.out / "run.json").read_text(encoding="utf-8"))
        cls.written, cls.delivery = report["influx"], report["influxDelivery"]
        print(
            f"\n  sample: {cls.written['points']} points, {cls.written['bytes']} bytes, "
            f"{cls.delivery['batches']} batches, deliver {cls.seconds:.2f} s",
            file=sys.stderr,
        )

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
        cls.temporary.cleanup()

    def test_deliver_writes_every_point_once(self) -> None:
        out, written, delivery = self.out, self.written, self.delivery
        self.assertEqual(delivery["sentPoints"], written["points"])
        self.assertEqual(delivery["acknowledgedBatches"], delivery["batches"])
        self.assertTrue(delivery["marksAdvanced"])

        stored = self.server.points()
        self.assertEqual(stored, written["measurements"])
        self.assertEqual(sum(stored.values()), written["points"])
        # Each measurement against the CSV rows of the same run.
        for name, file in [
            ("healthetl_daily", "daily.csv"),
            ("healthetl_sleep_nights", "sleep_daily.csv"),
            ("healthetl_workouts", "workouts.csv"),
        ]:
            self.assertEqual(stored[name], len(csv_rows(out / file)), name)
        heart_rate_minutes = [row for row in csv_rows(out / "stats/heart-rate-per-minute.csv") if row["count"] not in ("", "0")]
        self.assertEqual(stored["healthetl_heart_rate"], len(heart_rate_minutes))
        for sample_file in (out / "samples").glob("*.csv"):
            self.assertEqual(stored.get(sample_file.stem, 0), len(csv_rows(sample_file)), sample_file.name)

        # A day's steps: daily.csv's cell, at the instant the day begins in the run's zone.
        day = next(row for row in csv_rows(out / "daily.csv") if row["steps"] not in ("", "0"))
        midnight = int(datetime.fromisoformat(day["date"]).replace(tzinfo=ZoneInfo(ZONE)).timestamp())
        (series,) = self.server.query(f"SELECT steps FROM healthetl_daily WHERE time = {midnight}s")
        self.assertEqual(series["values"], [[midnight, float(day["steps"])]])

        # Everything again (--influx-all): InfluxDB replaces each point, so nothing doubles.
        again = run("deliver", "--out", str(out), "--influx", self.server.write_url, "--influx-all")
        self.assertIn(f"{written['points']} of {written['points']} point(s)", again.stderr)
        self.assertEqual(self.server.points(), stored)
        # Without it, only the points within the lookback of each measurement's mark go.
        state = json.loads((out / ".healthetl-state.json").read_text(encoding="utf-8"))
        (marks,) = [entry["marks"] for entry in state["influx"]]
        expected = sum(1 for name, seconds in lines(out / "influx.lp") if seconds >= marks[name] - LOOKBACK)
        run("deliver", "--out", str(out), "--influx", self.server.write_url)
        report = json.loads((out / "run.json").read_text(encoding="utf-8"))["influxDelivery"]
        self.assertEqual(report["sentPoints"], expected)
        self.assertLess(expected, written["points"] / 2)
        self.assertEqual(self.server.points(), stored)

    def test_a_second_night_sends_only_newer_points(self) -> None:
        """Night 2 gets the sample plus steps and heart rate dated after its export, so every point
        of night 1 is also a point of night 2: InfluxDB then holds exactly night 2's points, and
        night 2 sent only those at or after the marks less the lookback."""
        server = InfluxServer(self.root / "influxdb-nightly")
        self.addCleanup(server.stop)
        inbox, out = self.root / "inbox", self.root / "nightly-out"
        inbox.mkdir()
        arguments = [
            "nightly", "--inbox", str(inbox), "--out", str(out), "--tz", ZONE,
            "--pipeline", "default", "--pipeline", str(REPO / "Pipelines/influx.json"), "--influx", server.write_url,
        ]
        shutil.copy(REPO / "SampleData/export.zip", inbox / "export-1.zip")
        run(*arguments)
        first = json.loads((out / "run.json").read_text(encoding="utf-8"))["influx"]["measurements"]
        state = json.loads((out / ".healthetl-state.json").read_text(encoding="utf-8"))
        (marks,) = [entry["marks"] for entry in state["influx"]]

        with zipfile.ZipFile(REPO / "SampleData/export.zip") as archive:
            xml = archive.read("apple_health_export/export.xml").decode("utf-8")
        later = "".join(
            f' <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Alex’s iPhone" unit="count" '
            f'creationDate="2024-04-15 1{hour}:10:00 +0200" startDate="2024-04-15 1{hour}:00:00 +0200" '
            f'endDate="2024-04-15 1{hour}:05:00 +0200" value="{100 + hour}"/>\n'
            f' <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Alex’s Apple Watch" unit="count/min" '
            f'creationDate="2024-04-15 1{hour}:10:00 +0200" startDate="2024-04-15 1{hour}:02:00 +0200" '
            f'endDate="2024-04-15 1{hour}:02:00 +0200" value="{70 + hour}"/>\n'
            for hour in range(3)
        )
        xml = xml.replace('<ExportDate value="2024-04-15 09:00:00 +0200"/>', '<ExportDate value="2024-04-15 14:00:00 +0200"/>')
        xml = xml.replace("</HealthData>", later + "</HealthData>")
        with zipfile.ZipFile(inbox / "export-2.zip", "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("apple_health_export/export.xml", xml)
        run(*arguments)
        report = json.loads((out / "run.json").read_text(encoding="utf-8"))
        second = report["influx"]["measurements"]
        self.assertEqual(second["StepCount"], first["StepCount"] + 3)
        self.assertEqual(second["HeartRate"], first["HeartRate"] + 3)
        expected = sum(1 for name, seconds in lines(out / "influx.lp") if seconds >= marks.get(name, -(2**62)) - LOOKBACK)
        delivery = report["influxDelivery"]
        self.assertEqual(delivery["sentPoints"], expected)
        self.assertEqual(delivery["points"], report["influx"]["points"])
        self.assertGreater(delivery["olderPoints"], delivery["sentPoints"])
        stored = server.points()
        # `data-sources` holds one point per source at its latest sample: a source whose latest
        # sample moved has a point per night (dashboards read only its tag values).
        stored.pop("data-sources")
        second.pop("data-sources")
        self.assertEqual(stored, second)

    def test_every_dashboard_panel_has_data(self) -> None:
        """Each panel query of Pipelines/influx/grafana-dashboard.json, with Grafana's macros set
        to the sample's four weeks, returns a value."""
        dashboard = json.loads((REPO / "Pipelines/influx/grafana-dashboard.json").read_text(encoding="utf-8"))
        queries = [
            (panel["title"], target["query"])
            for panel in dashboard["panels"]
            for target in panel.get("targets", [])
        ]
        self.assertGreaterEqual(len(queries), 8)
        for title, query in queries:
            with self.subTest(panel=title):
                self.assertTrue(has_value(self.server.query(grafana(query))), query)

    def test_queries_of_the_sample_layout(self) -> None:
        """Queries of the shape k0rventen/apple-health-grafana's dashboards send (derived from
        its published dashboards, which are not kept here): per type, the value summed, averaged or
        taken at its extremes per day and unit, filtered by device; sources from `data-sources`."""
        (devices,) = self.server.query('SHOW TAG VALUES FROM "data-sources" WITH KEY = "device"')
        names = [value for _, value in devices["values"]]
        self.assertIn("Alex’s Apple Watch", names)
        source = "|".join(re.escape(name) for name in names)
        for measurement, function in [
            ("StepCount", "sum"), ("DistanceWalkingRunning", "sum"), ("ActiveEnergyBurned", "sum"),
            ("BasalEnergyBurned", "sum"), ("FlightsClimbed", "sum"), ("BodyMass", "last"),
            ("HeartRate", "min"), ("HeartRate", "max"), ("RestingHeartRate", "median"),
            ("WalkingHeartRateAverage", "median"), ("HeartRateVariabilitySDNN", "mean"),
        ]:
            query = (
                f'SELECT {function}("value") FROM "{measurement}" WHERE ("device" =~ /^({source})$/) AND $timeFilter '
                'GROUP BY time(1d), "unit", "device" fill(none)'
            )
            with self.subTest(measurement=measurement, function=function):
                self.assertTrue(has_value(self.server.query(grafana(query))), query)
        # Every measurement's last value per interval, as a dashboard of all types draws them.
        self.assertTrue(has_value(self.server.query(grafana(
            'SELECT last("value") FROM /^HeartRate|StepCount|SleepAnalysis$/ WHERE $timeFilter '
            'GROUP BY time($__interval), "unit", "device" fill(none)'))))


# The sample's weeks (SampleData/export.zip: 2024-03-18 to 2024-04-14), as Grafana fills in its macros.
TIME_FILTER = "time >= '2024-03-17T00:00:00Z' AND time < '2024-04-16T00:00:00Z'"


def grafana(query: str) -> str:
    return query.replace("$timeFilter", TIME_FILTER).replace("$__interval", "1h").replace("$interval", "1h")


def has_value(series: list[dict]) -> bool:
    """Whether any row of any series has a value besides its time."""
    return any(value is not None for s in series for row in s["values"] for value in row[1:])


if __name__ == "__main__":
    unittest.main()
