#!/usr/bin/env python3
"""Rewrite the generated column tables of the reference from `healthetl pipelines tables`.

Usage: update_column_docs.py HEALTHETL_BINARY DOC.md [DOC.md ...]

Each block sits between `<!-- generated: <id> (make docs) -->` and `<!-- end generated -->`
(ids: `<kind>.<table>` for a table's columns, `units` for the unit table), in whichever of the
given files holds it. A block that no file holds yet is reported, not placed: where it belongs
in the prose is a writer's decision. `HealthETLTests/TableDocumentationTests` fails when the
docs and the declarations differ.
"""
import re
import subprocess
import sys

binary, docs = sys.argv[1], sys.argv[2:]
generated = subprocess.run([binary, "pipelines", "tables"], check=True, capture_output=True, text=True).stdout
blocks = {table: block for block, table in re.findall(r"(<!-- generated: (\S+) .*?<!-- end generated -->)", generated, re.S)}
placed = set()
for doc in docs:
    text = open(doc, encoding="utf-8").read()
    for table, block in blocks.items():
        pattern = re.compile(r"<!-- (?:generated|columns): " + re.escape(table) + r" .*?<!-- end (?:generated|columns) -->", re.S)
        if pattern.search(text):
            text = pattern.sub(lambda _: block, text)
            placed.add(table)
    open(doc, "w", encoding="utf-8").write(text)
missing = [table for table in blocks if table not in placed]
for table in missing:
    print(f"no doc holds {table}; add `<!-- generated: {table} -->` … `<!-- end generated -->` where it belongs")
sys.exit(1 if missing else 0)
