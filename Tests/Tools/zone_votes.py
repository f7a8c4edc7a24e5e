#!/usr/bin/env python3
"""Where in an export the votes of `--tz auto`'s first rule come, and what its header says.

Usage: Tests/Tools/zone_votes.py EXPORT [EXPORT ...]   (export.xml, or export.zip)

For each export prints its `HealthData` locale and `ExportDate` (what a run knows before the
first record), the number of Record, Workout and Correlation elements, how many carry an
`HKTimeZone` metadata value (one vote each, as Pipelines/docs/samples.md, "Time zone", counts
them), the zones voted for, and the element after which the running majority is the final one
for good: how far into the file a run must read before the first rule has decided (issue 30,
"decide the zone ahead"). Also the zone the header alone would guess: the first zone the tz
database's `zone.tab` lists for the locale's country whose offset at the `ExportDate` is the one
written there, and whether the votes elect it. Reads line by line, so a file of any size takes
little memory; Apple's exports put each element and each metadata entry on a line of its own.
"""

import collections
import datetime
import io
import re
import sys
import zipfile
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

ELEMENT = re.compile(rb"^\s*<(Record|Workout|Correlation)[\s>]")
VOTE = re.compile(rb'<MetadataEntry key="HKTimeZone" value="([^"]*)"')
LOCALE = re.compile(rb'<HealthData locale="([^"]*)"')
EXPORT_DATE = re.compile(rb'<ExportDate value="([^"]*)"')


def lines(path):
    if path.lower().endswith(".zip"):
        archive = zipfile.ZipFile(path)
        members = [name for name in archive.namelist() if name.lower().endswith("/export.xml")]
        if not members:
            return None
        return io.BufferedReader(archive.open(members[0]))
    return open(path, "rb")


def country_zones(table="/usr/share/zoneinfo/zone.tab"):
    """{country code: [zone names]} in the table's order; {} without the table."""
    zones = collections.defaultdict(list)
    try:
        with open(table, encoding="utf-8") as rows:
            for row in rows:
                if not row.startswith("#"):
                    fields = row.rstrip("\n").split("\t")
                    if len(fields) >= 3:
                        zones[fields[0]].append(fields[2])
    except OSError:
        pass
    return zones


def header_guess(locale, export_date, zones):
    """The first zone of the locale's country at the ExportDate's written offset, else None."""
    if not locale or not export_date:
        return None
    country = locale.split("@")[0].split(".")[0].split("_")[-1].upper()
    try:
        written = datetime.datetime.strptime(export_date, "%Y-%m-%d %H:%M:%S %z")
    except ValueError:
        return None
    for name in zones.get(country, []):
        try:
            if written.astimezone(ZoneInfo(name)).utcoffset() == written.utcoffset():
                return name
        except ZoneInfoNotFoundError:
            continue
    return None


def main(paths):
    countries = country_zones()
    for path in paths:
        stream = lines(path)
        if stream is None:
            print(f"{path}: no export.xml inside")
            continue
        locale = export_date = None
        elements = 0
        voted_in = -1
        votes = []
        with stream:
            for line in stream:
                if locale is None and (match := LOCALE.search(line)):
                    locale = match.group(1).decode()
                if export_date is None and (match := EXPORT_DATE.search(line)):
                    export_date = match.group(1).decode()
                if ELEMENT.match(line):
                    elements += 1
                if (match := VOTE.search(line)) and voted_in != elements:
                    voted_in = elements
                    votes.append((elements, match.group(1).decode()))
        head = f"{path}: locale {locale}, ExportDate {export_date}, {elements} elements"
        guess = header_guess(locale, export_date, countries)
        if not votes:
            print(f"{head}, no HKTimeZone vote; header guess {guess or 'none'}")
            continue
        totals = collections.Counter(zone for _, zone in votes)
        final = totals.most_common(1)[0][0]
        running = collections.Counter()
        settled = None
        for element, zone in votes:
            running[zone] += 1
            leader = running.most_common(1)[0][0]
            settled = (settled or element) if leader == final else None
        zones = ", ".join(f"{zone} {count}" for zone, count in totals.most_common())
        verdict = "none" if guess is None else f"{guess}, " + ("elected" if guess == final else "not elected")
        print(
            f"{head}, {len(votes)} votes (first at element {votes[0][0]}): {zones}; decided after element {settled}; "
            f"header guess {verdict}"
        )


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[2])
    main(sys.argv[1:])
