#!/usr/bin/env python3
"""How far out of time order an export lists its quantity samples, per type.

Usage: Tests/Tools/record_order.py EXPORT [EXPORT ...]   (export.xml or export.zip)

For each export, walks the quantity records in document order and counts those that start more
than a window (1 h, 24 h) before the latest start already seen of their type: the samples a
statistics job accumulating behind a bounded reorder window would meet too late (issue 30,
Decision 1). Also counts the types whose records come back after another type's began: none
means a type is complete when the next one begins. Streams the XML; an export that is not
well-formed is reported and skipped.
"""

import collections
import datetime
import re
import sys
import zipfile
from xml.etree.ElementTree import ParseError, iterparse

WINDOWS = (3600, 86_400)
DATE = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) ?([+-]\d\d)(\d\d)")


def seconds(text):
    """Epoch seconds of an export date (`2020-10-24 20:22:00 +0100`), None if it is not one."""
    match = DATE.match(text or "")
    if not match:
        return None
    local = datetime.datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    sign = -1 if match.group(2).startswith("-") else 1
    offset = sign * (abs(int(match.group(2))) * 3600 + int(match.group(3)) * 60)
    return local.timestamp() - offset


def open_export(path):
    if not path.lower().endswith(".zip"):
        return open(path, "rb")
    archive = zipfile.ZipFile(path)
    names = [n for n in archive.namelist() if re.search(r"(^|/)(export|exportar)\.xml$", n, re.IGNORECASE)]
    # A localized phone names it in its language (导出.xml): then the one XML that is no CDA file.
    names = names or [n for n in archive.namelist() if n.lower().endswith(".xml") and "cda" not in n.lower()]
    if not names:
        raise ValueError("no export.xml in the zip")
    return archive.open(names[0])


def measure(path):
    """(samples, {window: samples behind it}, {window: {type: samples behind it}}, types that
    come back)."""
    latest = {}
    previous = None
    returning = set()
    total = 0
    behind = collections.Counter()
    by_type = {window: collections.Counter() for window in WINDOWS}
    with open_export(path) as stream:
        for _, element in iterparse(stream, events=("end",)):
            kind = element.get("type", "")
            if element.tag == "Record" and kind.startswith("HKQuantityTypeIdentifier"):
                if kind != previous and kind in latest:
                    returning.add(kind)
                previous = kind
                start = seconds(element.get("startDate"))
                if start is not None:
                    total += 1
                    seen = latest.get(kind)
                    for window in WINDOWS:
                        if seen is not None and start < seen - window:
                            behind[window] += 1
                            by_type[window][kind[len("HKQuantityTypeIdentifier"):]] += 1
                    latest[kind] = start if seen is None else max(seen, start)
            element.clear()
    return total, behind, by_type, len(returning)


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    grand = 0
    grand_behind = collections.Counter()
    for path in paths:
        try:
            total, behind, by_type, returning = measure(path)
        except (ParseError, ValueError, OSError, zipfile.BadZipFile) as error:
            print(f"{path}: skipped ({error})")
            continue
        grand += total
        grand_behind.update(behind)
        parts = [f"{behind[w]} ({100 * behind[w] / max(total, 1):.1f} %) over {w // 3600} h behind" for w in WINDOWS]
        worst = ", ".join(f"{t} {n}" for t, n in by_type[WINDOWS[0]].most_common(3))
        print(f"{path}: {total} quantity samples; " + "; ".join(parts) + (f" (most: {worst})" if worst else "")
              + f"; {returning} types come back")
    parts = [f"{grand_behind[w]} ({100 * grand_behind[w] / max(grand, 1):.1f} %) over {w // 3600} h" for w in WINDOWS]
    print(f"all: {grand} samples; " + "; ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
