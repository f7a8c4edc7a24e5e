#!/usr/bin/env python3
"""Writes the seed inputs of Tests/Fuzz/Corpus/ (run from the repository root).

Seeds are small on purpose (libFuzzer mutates small inputs fastest): slices of the bundled
sample export, hand-written edge cases, the shipped pipelines and code table, and a few of the
smallest real fixtures when /work/shared/fixtures/real is there (a user's clone does not have it;
the committed copies are then kept as they are). Regression inputs (`regression-*`) are never
touched. Deterministic: running it twice writes the same bytes.
"""

import io
import json
import os
import re
import sys
import zipfile

ROOT = os.getcwd()
CORPUS = os.path.join(ROOT, "Tests", "Fuzz", "Corpus")
REAL = "/work/shared/fixtures/real"
STAMP = (2024, 4, 15, 9, 0, 0)


def write(harness, name, data):
    folder = os.path.join(CORPUS, harness)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def sample_lines():
    with zipfile.ZipFile(os.path.join(ROOT, "SampleData", "export.zip")) as z:
        text = z.read("apple_health_export/export.xml").decode("utf-8")
    return text.split("\n")


def block(lines, start):
    """The element starting at line `start`, through its closing tag when it has children."""
    line = lines[start]
    if line.rstrip().endswith("/>"):
        return [line]
    tag = re.match(r"\s*<(\w+)", line).group(1)
    end = start
    while lines[end].strip() != f"</{tag}>":
        end += 1
    return lines[start : end + 1]


def find(lines, needle, nth=0, start=0):
    hits = [i for i in range(start, len(lines)) if needle in lines[i]]
    return hits[nth]


def document(body, prolog='<?xml version="1.0" encoding="UTF-8"?>\n'):
    return prolog + '<HealthData locale="en_DE">\n' + "\n".join(body) + "\n</HealthData>\n"


def xml_seeds():
    lines = sample_lines()
    seeds = {}
    root = find(lines, "<HealthData")
    # The real prolog: the DTD with its HealthKit Export Version comment, then the first records.
    seeds["sample-head.xml"] = "\n".join(lines[: root + 8]) + "\n</HealthData>\n"
    steps = [l for l in lines if "StepCount" in l and l.startswith(" <Record ")][:6]
    seeds["sample-steps.xml"] = document(steps + steps[:1])  # one byte-identical duplicate
    hr = [l for l in lines if "HKQuantityTypeIdentifierHeartRate\"" in l][:3]
    hrv = block(lines, find(lines, "HeartRateVariabilitySDNN", start=root))
    seeds["sample-heart-rate-hrv.xml"] = document(hr + hrv[:6] + hrv[-2:])
    night = find(lines, "HKCategoryValueSleepAnalysisInBed", start=root)
    seeds["sample-sleep-night.xml"] = document(
        block(lines, night) + [l for l in lines[night + 1 : night + 40] if "SleepAnalysis" in l][:14]
    )
    correlation = block(lines, find(lines, "<Correlation ", start=root))
    seeds["sample-correlation.xml"] = document(correlation)
    run = block(lines, find(lines, 'workoutActivityType="HKWorkoutActivityTypeRunning"', start=root))
    seeds["sample-workout-run.xml"] = document(run)
    swim = block(lines, find(lines, 'workoutActivityType="HKWorkoutActivityTypeSwimming"', start=root))
    laps = [l for l in lines if "SwimmingStrokeCount" in l or "DistanceSwimming" in l][:4]
    seeds["sample-workout-swim.xml"] = document(laps + swim[:30] + swim[-12:])
    old_run = [i for i in range(root, len(lines)) if 'workoutActivityType="HKWorkoutActivityTypeRunning"' in lines[i]]
    short = min(old_run, key=lambda i: len(block(lines, i)))
    seeds["sample-workout-old-style.xml"] = document(block(lines, short))
    summaries = [l for l in lines if l.startswith(" <ActivitySummary")][:2]
    seeds["sample-activity-summary.xml"] = document(summaries + [lines[find(lines, "<Me ")]])

    # Hand-written edge cases of the byte filter and the staging layer.
    record = (
        '<Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" '
        'creationDate="2024-03-18 08:00:00 +0100" startDate="2024-03-18 07:00:00 +0100" '
        'endDate="2024-03-18 07:10:00 +0100" value="{value}"/>'
    )
    seeds["edge-minimal.xml"] = "<HealthData>" + record.format(value="12") + "</HealthData>"
    seeds["edge-control-characters.xml"] = document([record.format(value="1\x0b2"), record.format(value="\x01")])
    seeds["edge-entities-cdata.xml"] = document(
        ['<Record type="A&amp;B" sourceName="&#x41;&#66;&lt;" startDate="2024-01-01 00:00:00 +0000" '
         'endDate="2024-01-01 00:00:00 +0000"><![CDATA[x]]><!-- c --><?pi x?></Record>']
    )
    seeds["edge-doctype-ios16.xml"] = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE HealthData [\n'
        "<!-- HealthKit Export Version: 12 -->\n<!ELEMENT HealthData (ExportDate,Me,(Record)*)>\n"
        "<!ATTLIST VisionPrescription\n  type CDATA #REQUIRED\n<!ELEMENT RightEye EMPTY>\n"
        '  device CDATA #IMPLIED\n>\n]>\n<HealthData locale="en_US">\n <ExportDate value="2022-12-01 10:00:00 -0800"/>\n '
        + record.format(value="3")
        + "\n</HealthData>\n"
    )
    seeds["edge-doctype-quotes-comments.xml"] = (
        '<!DOCTYPE HealthData [ <!ENTITY x "]>"> <!-- ]> --> <!ATTLIST a b CDATA \']>\'> ]>'
        "<HealthData>" + record.format(value="&x;") + "</HealthData>"
    )
    seeds["edge-wrong-root.xml"] = "<?xml version='1.0'?><gpx><trk/></gpx>"
    # Markup words inside prolog comments and instructions are text (issue 31.7).
    seeds["edge-doctype-in-prolog-comment.xml"] = document(
        [record.format(value="4")],
        prolog='<?xml version="1.0" encoding="UTF-8"?>\n<!-- notes: <!DOCTYPE [ -->\n<?notes <!DOCTYPE x> ?>\n'
        "<!DOCTYPE HealthData [\n<?notes not the end: ]> ?>\n<!-- HealthKit Export Version: 13 -->\n]>\n",
    )
    seeds["edge-truncated.xml"] = document([record.format(value="5")])[:-40]
    seeds["edge-dates-and-numbers.xml"] = document(
        [
            record.format(value="1e308").replace("2024-03-18 07:00:00 +0100", "0001-01-01 00:00:00 -2359"),
            record.format(value="-0.0").replace("2024-03-18 07:10:00 +0100", "9999-12-31 23:59:59 +2359"),
            record.format(value="NaN").replace("+0100", "+9999"),
            record.format(value="12,5").replace("07:10:00", "06:59:59"),
            '<Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="W" startDate="2024-03-31 01:30:00 +0100" '
            'endDate="2024-03-31 03:30:00 +0200" value="HKCategoryValueSleepAnalysisAsleepCore">'
            '<MetadataEntry key="HKTimeZone" value="Europe/Berlin"/></Record>',
        ]
    )
    seeds["edge-nested-unknown.xml"] = document(
        ['<ClinicalRecord type="x" identifier="1"><Foo a="1"><Bar/></Foo></ClinicalRecord>',
         '<Workout workoutActivityType="HKWorkoutActivityTypeRunning" sourceName="W" startDate="2024-03-18 07:00:00 +0100" '
         'endDate="2024-03-18 07:30:00 +0100"><WorkoutActivity uuid="u" startDate="2024-03-18 07:00:00 +0100">'
         '<WorkoutEvent type="HKWorkoutEventTypeLap" date="2024-03-18 07:01:00 +0100"/>'
         '<WorkoutStatistics type="HKQuantityTypeIdentifierHeartRate" average="150" unit="count/min"/>'
         "</WorkoutActivity><WorkoutRoute><FileReference path=\"/workout-routes/r.gpx\"/></WorkoutRoute></Workout>"]
    )
    # XML broken in the middle, for the recovering read (Pipelines/docs/input.md, "Bad input"): an
    # app's workout left unclosed among records; damaged attributes and end tags; a stray '<'.
    workout = (
        '<Workout workoutActivityType="HKWorkoutActivityTypeCycling" sourceName="App" '
        'startDate="2024-03-18 07:00:00 +0100" endDate="2024-03-18 08:00:00 +0100">'
    )
    seeds["edge-broken-unclosed-workout.xml"] = document(
        [record.format(value="1"), workout, ' <MetadataEntry key="HKIndoorWorkout" value="0"/>',
         ' <WorkoutEvent type="HKWorkoutEventTypePause" date="2024-03-18 07:10:00 +0100"/>',
         record.format(value="2"), workout, "</Workout>", record.format(value="3")]
    )
    seeds["edge-broken-attributes.xml"] = document(
        [record.format(value="1").replace('sourceName="Phone"', 'sourceName="Ph & one"'),
         record.format(value="2").replace('sourceName="Phone"', 'sourceName="Phone'),
         record.format(value="3").replace('unit="count"', "unit=count"),
         record.format(value="4").replace("/>", "></Recod>"),
         " & " + record.format(value="5"), record.format(value="6")]
    )
    seeds["edge-broken-stray-lt.xml"] = document(
        [record.format(value="1"), workout, " <3 " + record.format(value="2"), "</Workout>", record.format(value="3")]
    )
    # Inline route points no person could have recorded (Pipelines/docs/workouts.md, "Routes"): out of range,
    # out of order, a jump half way round the Earth and back, a date far outside the workout.
    locations = [
        ("52.5", "13.4", "07:00:00"), ("91", "13.4", "07:00:01"), ("52.5", "181", "07:00:02"),
        ("1e308", "-1e308", "07:00:03"), ("0", "180", "07:00:04"), ("52.5001", "13.4", "07:00:05"),
        ("52.5003", "13.4", "07:00:09"), ("52.5002", "13.4", "07:00:07"), ("52.5", "13.4", "9999-12-31 23:59:59"),
    ]
    seeds["edge-route-locations.xml"] = document(
        ['<Workout workoutActivityType="HKWorkoutActivityTypeRunning" sourceName="W" startDate="2024-03-18 07:00:00 +0100" '
         'endDate="2024-03-18 07:30:00 +0100"><WorkoutRoute sourceName="W">'
         + "".join(f'<Location date="{time if time.startswith("9") else "2024-03-18 " + time} +0100" latitude="{lat}" '
                   f'longitude="{lon}" altitude="{"9001" if lat == "52.5003" else "34"}"/>' for lat, lon, time in locations)
         + "</WorkoutRoute></Workout>"]
    )
    # More sources than the report lists per type (it sums the rest into one row), overlapping
    # one another, with names that rank as a Watch, an iPhone, or by a combining mark neither.
    many = []
    for k in range(24):
        name = ["App %02d" % k, "Band Watch %02d" % k, "iPhone %02d" % k, "Watch\u0301 %02d" % k][k % 4]
        many.append(record.format(value=str(10 + k)).replace('sourceName="Phone"', 'sourceName="%s"' % name)
                    .replace("07:10:00", "07:%02d:00" % (11 + k)))
        many.append('<Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="%s" '
                    'startDate="2024-03-18 01:%02d:00 +0100" endDate="2024-03-18 05:00:00 +0100" '
                    'value="HKCategoryValueSleepAnalysisAsleepCore"/>' % (name, k))
    seeds["edge-many-sources.xml"] = document(many)
    # Beat lists in every form a clock time is written in, and forms no clock is (Pipelines/README.md,
    # "Beat-to-beat heart rate"): past midnight, a repeat, unreadable times and rates, a fraction
    # longer than a millisecond, a beat list outside any record.
    times = ["11:59:59.00 PM", "12:00:00.80\u202fAM", "00:00:01,80", "00:00:01,80", "24:00:00", "7:47", "",
             "0:00:00 AM", "1:02:03.45678901234567890", "13:00:00 PM", "23:59:59.99 pm"]
    rates = ["60", "75", "1e308", "60", "-5", "0", "abc", "60", "400", "401", ""]
    seeds["edge-hrv-beats.xml"] = document(
        ['<Record type="HKQuantityTypeIdentifierHeartRateVariabilitySDNN" sourceName="W" unit="ms" '
         'startDate="2024-03-17 23:59:58 +0100" endDate="2024-03-18 00:01:00 +0100" value="40">'
         '<MetadataEntry key="HKTimeZone" value="Nowhere/Zone"/><HeartRateVariabilityMetadataList>'
         + "".join(f'<InstantaneousBeatsPerMinute bpm="{b}" time="{t}"/>' for t, b in zip(times, rates))
         + '</HeartRateVariabilityMetadataList></Record>',
         '<HeartRateVariabilityMetadataList><InstantaneousBeatsPerMinute bpm="60" time="1:00:00 AM"/>'
         '</HeartRateVariabilityMetadataList>']
    )
    # A triathlon: activities with their own types, one without an end, statistics at both levels.
    seeds["edge-multisport.xml"] = document(
        ['<Workout workoutActivityType="HKWorkoutActivityTypeSwimBikeRun" duration="60" durationUnit="min" '
         'sourceName="W" startDate="2024-03-18 07:00:00 +0100" endDate="2024-03-18 08:00:00 +0100">'
         '<WorkoutActivity uuid="a" workoutActivityType="HKWorkoutActivityTypeSwimming" '
         'startDate="2024-03-18 07:00:00 +0100" endDate="2024-03-18 07:20:00 +0100" duration="20" durationUnit="min">'
         '<WorkoutStatistics type="HKQuantityTypeIdentifierDistanceSwimming" startDate="2024-03-18 07:00:00 +0100" '
         'endDate="2024-03-18 07:20:00 +0100" sum="750" unit="m"/></WorkoutActivity>'
         '<WorkoutActivity uuid="b" workoutActivityType="HKWorkoutActivityTypeNoSuchSport" '
         'startDate="2024-03-18 07:20:00 +0100" duration="x" durationUnit="min">'
         '<WorkoutStatistics type="HKQuantityTypeIdentifierHeartRate" average="1e308" unit="count/min"/>'
         '</WorkoutActivity>'
         '<WorkoutActivity workoutActivityType="" endDate="2024-03-18 06:00:00 +0100"/>'
         '<WorkoutStatistics type="HKQuantityTypeIdentifierDistanceSwimming" startDate="2024-03-18 07:00:00 +0100" '
         'endDate="2024-03-18 08:00:00 +0100" sum="750" unit="m"/></Workout>']
    )
    seeds.update(legacy_seeds())
    return seeds


def legacy_seeds():
    """The iOS 8-9 format (Pipelines/docs/input.md, "The iOS 8–9 format"): no DOCTYPE, `source=`,
    compact dates, and attribute names with spaces that the byte filter rewrites -- next to the
    same bytes inside a comment, a CDATA section and a value, which it must leave; then a run of
    spaces too long to be held back across reads."""
    head = '<?xml version="1.0" encoding="UTF-8"?>\n<HealthData locale="en_GB">\n <ExportDate value="20151107171924+0100"/>\n'
    weight = ('<Record type="HKQuantityTypeIdentifierBodyMass" source="Health Mate" unit="kg" '
              'startDate="20151107071500+0100" endDate="20151107071500+0100" value="72.4" '
              'Health Mate App Version="2.6.2" Withings  User Identifier = "4711"/>')
    run = ('<Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="31.5" durationUnit="min" '
           'source="Runtastic" startDate="20151107090000+0100" endDate="20151107093130+0100"/>')
    return {
        "edge-ios8-format.xml": head + " " + weight + "\n <!-- <Record a b=\"1\"/> -->"
        + "<![CDATA[ <x a b=\"1\"> ]]>\n <Me note=\"a b c=d\"/>\n " + run + "\n</HealthData>\n",
        "edge-ios8-long-space-run.xml": head + ' <Record type="T" source="S" a' + " " * 300 + 'b="1"/>\n</HealthData>\n',
        "edge-ios8-doctype-in-comment.xml": head.replace("<HealthData", "<!-- iOS 10 adds a <!DOCTYPE x> -->\n<HealthData")
        + " " + weight + "\n</HealthData>\n",
    }


def scrub(data):
    """Dates of birth and initials in source names are not needed to reach any code."""
    data = re.sub(rb'(DateOfBirth=")[0-9-]*"', rb'\g<1>1970-01-01"', data)
    return data.replace(b'sourceName="NJR ', b'sourceName="')


def real_xml_seeds():
    """The smallest real exports (authors' public test data; see SOURCES.md there)."""
    picks = {
        "real-tdda-hk3.xml": "tdda__applehealthdata/testdata/export6s3sample.xml",
        "real-aleksi.xml": "AlekSi__applehealth/testdata/testdata.xml",
        "real-resting-heart-rate.xml": "NicolasReyrolle__apple-health-analyzer/tests/fixtures/exports/record_resting_heart_rate.xml",
        "real-workout-swimming.xml": "NicolasReyrolle__apple-health-analyzer/tests/fixtures/exports/workout_swimming.xml",
        "real-opendroid-anonymised.xml": "opendroid__hk/public/sampleexport.xml",
    }
    seeds = {name: scrub(open(os.path.join(REAL, path), "rb").read()) for name, path in picks.items()}
    # Apple's broken iOS 16 DTD (jshrake's export, trimmed to the prolog and the first lines after it).
    with zipfile.ZipFile(os.path.join(REAL, "jshrake__healthkit-to-sqlite/example/export.zip")) as z:
        name = next(n for n in z.namelist() if n.endswith("export.xml") and "__MACOSX" not in n)
        text = z.read(name)
    head = text[: text.index(b"<HealthData")]
    seeds["real-ios16-broken-dtd.xml"] = head + b'<HealthData locale="en_US">\n</HealthData>\n'
    # A DTD missing one '>' (k0rventen's test-export3), prolog only.
    with zipfile.ZipFile(os.path.join(REAL, "k0rventen__apple-health-grafana/tests/test-export3.zip")) as z:
        name = next(n for n in z.namelist() if n.endswith(".xml") and "cda" not in n)
        text = z.read(name)
    head = text[: text.index(b"<HealthData")]
    seeds["real-dtd-missing-bracket.xml"] = head + b'<HealthData locale="en_FR">\n</HealthData>\n'
    return seeds


def gpx_seeds():
    """The real GPX route files, each cut to its first five track points (libFuzzer mutates small
    inputs fastest), plus hand-written edge cases."""
    seeds = {}
    for folder, _, files in sorted(os.walk(REAL)):
        for name in sorted(files):
            if not name.endswith(".gpx"):
                continue
            text = open(os.path.join(folder, name), encoding="utf-8").read()
            lines = text.split("\n")
            points = [i for i, line in enumerate(lines) if "<trkpt" in line]
            if len(points) > 5:
                lines = lines[: points[5]] + [line for line in lines[points[-1] + 1 :]]
            owner = os.path.relpath(folder, REAL).split(os.sep)[0].split("__")[0]
            seeds[f"real-{owner}-{name}"] = "\n".join(lines)
    return seeds


def ecg_seeds():
    """ECG files as the Health app writes them (no real one could be found, see SOURCES.md): English,
    a decimal-comma locale with localised keys and CRLF, and files cut or broken on purpose."""
    english = ('Name,Alex Example\nDate of Birth,"Mar 4, 1985"\nRecorded Date,2024-03-20 08:15:32 +0100\n'
               "Classification,Sinus Rhythm\nSymptoms,\nSoftware Version,1.90\nDevice,\"Watch6,2\"\nSample Rate,512 hertz\n\n"
               "Lead,Lead I\nUnit,µV\n\n-19.512\n-22.107\n5\n1000.25\n")
    portuguese = ('\ufeffNome,Alex\r\nData de nascimento,"4 de mar. de 1985"\r\nData de registro,2024-03-21 09:00:00 -0300\r\n'
                  'Classificação,Ritmo sinusal\r\nSintomas,"Tontura, falta de ar"\r\nVersão do software,"1,90"\r\n'
                  'Dispositivo,"Watch6,2"\r\nTaxa de amostragem,"512 hertz"\r\nFrequência cardíaca média,"72,5 BPM"\r\n\r\n'
                  'Derivação,Derivação I\r\nUnidade,µV\r\n\r\n-265,868\r\n"12,5"\r\n0\r\n-0,001')
    return {
        "edge-english.csv": english,
        "edge-decimal-comma.csv": portuguese,
        "edge-bad-sample.csv": english.replace("-22.107", "-22.1.07"),
        "edge-cut-in-header.csv": english[: english.index("Sample Rate") + 5],
        "edge-no-sample.csv": english[: english.index("-19.512")],
        "edge-quotes.csv": 'Name,"a ""b"" c\nRecorded Date,"2024-03-20 08:15:32 +0100\nSample Rate,"""512"" hertz"\n"1,5"\n"\n',
        "edge-long-lines.csv": "Sample Rate,512 hertz\n1\n" + "9" * 200 + "\n",
        "edge-many-header-lines.csv": "Key,value\n" * 40 + "1\n",
        "edge-not-an-ecg.csv": "name,kg\nbob,71\n",
    }


def fhir_seeds():
    """FHIR resource files as clinical records name them (DSTU2 and R4; no real export with them
    could be found, see SOURCES.md), and resources cut or broken on purpose."""
    procedure = ('{"resourceType":"Procedure","id":"x","code":{"coding":[{"system":"http://www.ama-assn.org/go/cpt",'
                 '"code":"45378","display":"Colonoscopy"}],"text":"COLONOSCOPY"},'
                 '"performedPeriod":{"start":"2019-05-12T10:00:00-07:00","end":"2019-05-12"}}')
    observation = ('{"resourceType":"Observation","status":"final","code":{"coding":[{"system":"http://loinc.org",'
                   '"code":"4548-4","display":"Hemoglobin A1c"}],"text":"HbA1c"},"effectiveDateTime":"2021-02-01T08:00:00Z",'
                   '"valueQuantity":{"value":5.4,"unit":"%"},"issued":"2021-02-02"}')
    return {
        "edge-dstu2-procedure.json": procedure,
        "edge-r4-observation.json": observation,
        "edge-immunization.json": '{"resourceType":"Immunization","vaccineCode":{"text":"Influenza"},"date":"2020-10-01"}',
        "edge-allergy-dstu2.json": '{"resourceType":"AllergyIntolerance","substance":{"coding":[{"code":"227493005"}]},"onset":"2001"}',
        "edge-control-characters.json": '{"resourceType":"Observation","code":{"text":"t\\u0000w\\u007fo\\u001b"}}',
        "edge-not-an-object.json": "[1,2]",
        "edge-duplicate-key.json": '{"resourceType":"A","resourceType":"B"}',
        "edge-cut.json": observation[:70],
        "edge-deep.json": "[" * 80 + "]" * 80,
    }


def zip_bytes(members, compression=zipfile.ZIP_DEFLATED, stream=False, zip64=False):
    buffer = io.BytesIO()

    class Unseekable(io.RawIOBase):
        # zipfile writes data descriptors (flag bit 3) when it cannot seek back, as phones do.
        def writable(self):
            return True

        def write(self, b):
            return buffer.write(b)

    target = Unseekable() if stream else buffer
    with zipfile.ZipFile(target, "w", compression=compression) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, STAMP)
            info.compress_type = compression
            with z.open(info, "w", force_zip64=zip64) as f:
                f.write(data)
    return buffer.getvalue()


def zip_seeds(xml):
    tiny = xml["edge-minimal.xml"].encode()
    steps = xml["sample-steps.xml"].encode()
    cda = b'<?xml version="1.0"?><ClinicalDocument/>'
    gpx = b'<?xml version="1.0"?><gpx version="1.1"><trk><trkseg><trkpt lat="0" lon="0"/></trkseg></trk></gpx>'
    return {
        "layout-iphone.zip": zip_bytes(
            [("apple_health_export/export.xml", steps), ("apple_health_export/export_cda.xml", cda),
             ("apple_health_export/workout-routes/route_2024-03-18_6.36pm.gpx", gpx)]),
        "stored.zip": zip_bytes([("export.xml", tiny)], compression=zipfile.ZIP_STORED),
        "data-descriptors.zip": zip_bytes([("apple_health_export/export.xml", steps)], stream=True),
        "zip64.zip": zip_bytes([("apple_health_export/export.xml", tiny)], zip64=True),
        "cda-first-macosx.zip": zip_bytes(
            [("apple_health_export/export_cda.xml", cda), ("__MACOSX/apple_health_export/._export.xml", b"\0\5\26\7"),
             ("apple_health_export/导出.xml", tiny)]),
        "no-export.zip": zip_bytes([("apple_health_export/notes.txt", b"hello")]),
        "empty.zip": zip_bytes([]),
        "plain.xml": tiny,
    }


def answer_seeds():
    """Server answers for the `answer` harness: a flags byte (bit 0: cut short), the token and a
    line feed, the body; each echoes the token in one of the forms the excerpt removes."""
    token = "s3cret/Tok~en?42"

    def answer(body, cut=False, with_token=token):
        return bytes([1 if cut else 0]) + with_token.encode() + b"\n" + body.encode("utf-8")

    return {
        "edge-exact": answer("rejected; you sent Authorization: Bearer s3cret/Tok~en?42"),
        "edge-json": answer('{"error": "bad record", "headers": {"Authorization": "Bearer s3cret\\/Tok~en?42"}}'),
        "edge-unicode": answer('{"t": "\\u0073\\u0033cret\\u002fTok~en?42", "n": "s3cret/T\\nok~en?42"}'),
        "edge-case": answer("S3CRET/TOK~EN?42 s3cret/tok~en?42"),
        "edge-percent-html": answer("/r?t=s3cret%2FTok~en%3F42&x=1 s3cret&#47;Tok&#x7E;en?42"),
        "edge-base64": answer("czNjcmV0L1Rva35lbj80Mg== eHMzY3JldC9Ub2t+ZW4/NDI= eHMzY3JldC9Ub2t-ZW4_NDI "
                              "eHlzM2NyZXQvVG9rfmVuPzQy"),
        "edge-hex": answer("7333637265742f546f6b7e656e3f3432 7333637265742F546F6B7E656E3F3432"),
        "edge-split": answer("split s3cret/T\r\nok~en?42, folded s3cre\n t/Tok\n ~en?4\n 2, "
                             "zero-width s3cret\u200b/Tok~en?42"),
        "edge-cut-short": answer(" " * 300 + "error: s3c", cut=True),
        "edge-short-token": answer("xab1y AB1 ab [token]", with_token="ab1"),
        "edge-no-token-line": b"\x00" + "s3cret/Tok~en?42 and no line feed".encode(),
        "edge-bad-escapes": answer("\\u12 \\uZZZZ %G1 % &#; &#x; &#99999999; \\ud83d \\"),
        "edge-long": answer("\u00e9" * 150 + " s3cret/Tok~en?42"),
    }


def lineprotocol_seeds():
    """Points for the `lineprotocol` harness: flags (bits 0-1: tags; bit 7: an 8-byte time), field
    kinds (2 bits each: float, integer, string, none), the time, then names and values separated
    by 0xFF."""
    import struct

    def point(parts, tags=0, kinds=0, time=1710748800, wide=False):
        head = bytes([tags | (0x80 if wide else 0), kinds])
        head += struct.pack("<q", time) if wide else struct.pack("<i", time)
        return head + b"\xff".join(p.encode("utf-8") if isinstance(p, str) else p for p in parts)

    return {
        "sample-step-count": point(["StepCount", "device", "Alex\u2019s iPhone", "unit", "count", "value", "822"], tags=2),
        "sample-category": point(["SleepAnalysis", "device", "Watch", "value", "AsleepCore"], tags=1, kinds=0b10),
        "sample-workout": point(["healthetl_workouts", "activity_type", "Running", "duration_s", "1834.5",
                                 "elapsed_s", "1900", "workout_id", "a-b", "hr_avg", "nan"],
                                tags=1, kinds=0b00_10_01_00),
        "edge-escapes": point(["#m a,b\\", "k=1, \\", "v\n\"x\"\\", "f=,", 'say "hi"\\\n', "g", "-0"],
                              tags=1, kinds=0b00_10),
        "edge-underscore-unicode": point(["_m\u0301", "\u00e9\u0301", "\u65e5\u672c", "e\u0301", "x" * 300],
                                         tags=1, kinds=0b10),
        "edge-float-bits": point(["m", "a", struct.pack("<d", 5e-324), "b", struct.pack("<d", float("inf")),
                                  "c", struct.pack("<d", 1e308)], kinds=0),
        "edge-time-range": point(["m", "v", "1"], time=-9223372036, wide=True),
        "edge-time-beyond": point(["m", "v", "1"], time=9223372037, wide=True),
        "edge-duplicates": point(["m", "k", "1", "k", "2", "f", "1", "f", "2"], tags=2, kinds=0b01_01),
        "edge-empty": point(["", "", "x", "", "1"], tags=1, kinds=0b01),
    }


def main():
    xml = xml_seeds()
    for name, data in xml.items():
        write("xml", name, data)
    # The run harness starts from the seeds that reach the stages.
    for name in ["sample-sleep-night.xml", "sample-steps.xml", "sample-heart-rate-hrv.xml", "sample-workout-run.xml",
                 "sample-workout-swim.xml", "sample-workout-old-style.xml", "sample-correlation.xml",
                 "edge-dates-and-numbers.xml", "edge-nested-unknown.xml", "edge-minimal.xml", "edge-route-locations.xml",
                 "edge-many-sources.xml", "edge-hrv-beats.xml", "edge-multisport.xml"]:
        write("run", name, xml[name])
    for name, data in zip_seeds(xml).items():
        write("zip", name, data)

    pipelines = os.path.join(ROOT, "Pipelines")
    for name in sorted(os.listdir(pipelines)):
        if name.endswith(".json") and name != "workout-codes.json":
            write("pipeline", "shipped-" + name, open(os.path.join(pipelines, name), "rb").read())
    write("pipeline", "edge-all-keys.json", json.dumps({
        "version": 1, "name": "x", "description": "d", "timezone": "Europe/Berlin", "sourcePriority": ["Watch"],
        "sleep": {"sessionGapMinutes": 0, "dayBoundary": "23:59"},
        "jobs": [
            {"name": "s", "kind": "samples", "types": ["StepCount"], "outputs": [{"file": "a.ndjson"}]},
            {"name": "e", "kind": "elements", "names": ["ActivitySummary"]},
            {"name": "w", "kind": "workouts", "codes": "workout-codes.json", "outputs": [{"table": "laps", "file": "l.csv"}]},
            {"name": "t", "kind": "statistics", "type": "HeartRate", "interval": "90min", "anchor": "2024-01-01T00:00",
             "options": ["min", "max", "avg", "count"], "separateBySource": True},
        ]}, indent=1))
    # null wherever a value is optional: material for crossover into the required places.
    write("pipeline", "edge-nulls.json", json.dumps({
        "version": 1, "name": "x", "description": None, "timezone": None, "sourcePriority": None,
        "sleep": {"sessionGapMinutes": None, "dayBoundary": None},
        "jobs": [
            {"name": "t", "kind": "statistics", "type": "HeartRate", "interval": "1h", "anchor": None,
             "options": ["avg"], "separateBySource": None, "outputs": [{"table": None, "file": "t.csv", "format": None}]},
            {"name": "w", "kind": "workouts", "codes": None},
        ]}))
    write("pipeline", "edge-wrong-types.json",
          '{"version": 1.5, "name": 7, "jobs": [{"name": "a b", "kind": "sleep", "outputs": [{"file": "../x"}]}], "x": true}')

    codes = open(os.path.join(pipelines, "workout-codes.json"), "rb").read()
    write("codes", "shipped-workout-codes.json", codes)
    write("codes", "edge-minimal.json", '{"version": 1, "codes": {}}')
    write("codes", "edge-escapes.json",
          '{"version": 1, "description": "\\u00e9\\ud83d\\ude00\\n", "default": "S\\u0041", "codes": {"Running": "SERVER02"}}\n')
    write("codes", "edge-errors.json", '{"version": 1e0, "codes": {"HKWorkoutActivityTypeRunning": "a b"}, "x": [1, -0.5e+3, null]}')

    write("state", "delivered.json", json.dumps({
        "version": 1, "emitted": ["3f1c2a9e-0000-5000-8000-000000000001"],
        "pending": [{"recordUuid": "3f1c2a9e-0000-5000-8000-000000000002", "workoutType": "SERVER02"}],
        "processed": [{"sha256": "ab" * 32, "name": "export.zip", "bytes": 579364}]}, indent=2))
    write("state", "edge-version-4-failing.json", json.dumps({
        "version": 4, "sequence": 3,
        "processed": [{"sha256": "ab" * 32, "name": "export.zip", "bytes": 579364}],
        "quarantined": [{"sha256": "cd" * 32, "name": "cut.zip", "bytes": 10, "exitCode": 65, "reason": "cut short"}],
        "failing": [{"sha256": "ef" * 32, "name": "big.zip", "bytes": 99, "exitCode": 74,
                     "reason": "I/O error writing x: File too large", "nights": 2}],
        "pending": [], "outbox": []}, indent=2))
    write("state", "empty-object.json", "{}")
    for name, data in answer_seeds().items():
        write("answer", name, data)
    for name, data in lineprotocol_seeds().items():
        write("lineprotocol", name, data)

    write("state", "wrong-types.json", '{"emitted": [1, null], "pending": [{"a": 1}], "processed": [{"sha256": "x", "name": "y", "bytes": 1e300}]}')

    gpx = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1">'
        "<trk><trkseg>\n"
        '<trkpt lat=" 52.5 " lon="13.4"><ele>34.5</ele><time>2024-03-18T18:06:10.250+01:00</time>'
        "<extensions><speed>-1</speed><course>-1</course><hAcc>4</hAcc><vAcc>2</vAcc></extensions></trkpt>\n"
        "</trkseg><trkseg>\n"
        '<trkpt lon="13.41" lat="52.51"><time>2024-03-18T17:07:00Z</time></trkpt>\n'
        "</trkseg></trk></gpx>\n"
    )
    write("gpx", "edge-two-segments.gpx", gpx)
    write("gpx", "edge-cut-short.gpx", gpx[: gpx.index("</trkpt>")])
    write("gpx", "edge-wrong-root.gpx", '<?xml version="1.0"?><kml><trkpt lat="1" lon="2"/></kml>')
    write("gpx", "edge-doctype.gpx", '<?xml version="1.0"?><!DOCTYPE gpx [<!ENTITY e "x">]><gpx><trk><trkseg>'
          '<trkpt lat="&e;" lon="2"><time>bad</time></trkpt></trkseg></trk></gpx>')
    # Points no person could have recorded (Pipelines/docs/workouts.md, "Routes"). 100 points alternating between
    # (0, 0) and (0, 180), one a second, once gave 505 MB of splits.
    def track(points):
        return ('<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1" creator="Apple Health Export"><trk><trkseg>\n'
                + "".join(f'<trkpt lat="{lat}" lon="{lon}">{ele}<time>{time}</time></trkpt>\n' for lat, lon, ele, time in points)
                + "</trkseg></trk></gpx>\n")
    def at(second):
        return f"2024-03-20T10:{second // 60:02d}:{second % 60:02d}Z"
    write("gpx", "edge-round-the-world.gpx", track([(0, 0 if i % 2 == 0 else 180, "", at(i)) for i in range(100)]))
    write("gpx", "edge-out-of-range.gpx", track([
        (52.5, 13.4, "", at(0)), (91, 13.4, "", at(1)), (52.5, 181, "", at(2)), ("1e308", 13.4, "", at(3)),
        (52.5, "-1e308", "", at(4)), (-90.0001, 0, "", at(5)), (52.5001, 13.4, "<ele>9000.5</ele>", at(6)),
        (52.5001, 13.4, "<ele>-1e308</ele>", at(7)), (52.5001, 13.4, "<ele>34</ele>", "yesterday")]))
    write("gpx", "edge-out-of-order.gpx", track(
        [(52.5 + 0.005 * k, 13.4, "", at(60 * k)) for k in range(3)] + [(52.55, 13.4, "", at(630))]
        + [(52.5 + 0.005 * k, 13.4, "", at(60 * k)) for k in range(3, 11)]
        + [(52.55, 13.4, "", "9999-12-31T23:59:59Z"), (52.5025, 13.4, "", at(30)), (52.5, 13.4, "", "2024-03-20T09:00:00Z")]))

    for name, data in ecg_seeds().items():
        write("ecg", name, data)
    for name, data in fhir_seeds().items():
        write("fhir", name, data)
    write("pipeline", "edge-clinical-copy.json", json.dumps({
        "version": 1, "name": "c", "jobs": [
            {"name": "c", "kind": "clinical-records", "copyResources": True, "outputs": [{"file": "c.ndjson"}]},
            {"name": "e", "kind": "electrocardiograms", "outputs": [{"table": "samples", "file": "s.json"}]}]}))

    if os.path.isdir(REAL):
        for name, data in gpx_seeds().items():
            write("gpx", name, data)
        for name, data in real_xml_seeds().items():
            write("xml", name, data)
        write("zip", "real-alxdrcirilo.zip", open(os.path.join(REAL, "alxdrcirilo__apple-health-parser/tests/data/export.zip"), "rb").read())
    else:
        print(f"{REAL} is absent: the committed real seeds are kept as they are", file=sys.stderr)


if __name__ == "__main__":
    main()
