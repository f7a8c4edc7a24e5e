#!/usr/bin/env python3
"""Rewrite the generated column tables in Pipelines/README.md from `healthetl pipelines tables`.

Each block sits between `<!-- generated: <id> (make docs) -->` and `<!-- end generated -->`
(ids: `<kind>.<table>` for a table's columns, `units` for the unit table). A block that is not in the README yet is reported, not placed: where it
belongs in the prose is a writer's decision. `HealthETLTests/TableDocumentationTests` fails when
the README and the declarations differ.
"""
import re
import subprocess
import sys

binary, readme = sys.argv[1], sys.argv[2]
generated = subprocess.run([binary, "pipelines", "tables"], check=True, capture_output=True, text=True).stdout
blocks = {table: block for block, table in re.findall(r"(<!-- generated: (\S+) .*?<!-- end generated -->)", generated, re.S)}
text = open(readme, encoding="utf-8").read()
missing = []
for table, block in blocks.items():
    pattern = re.compile(r"<!-- (?:generated|columns): " + re.escape(table) + r" .*?<!-- end (?:generated|columns) -->", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        missing.append(table)
open(readme, "w", encoding="utf-8").write(text)
for table in missing:
    print(f"{readme}: no block for {table}; add `<!-- generated: {table} -->` … `<!-- end generated -->` where it belongs")
sys.exit(1 if missing else 0)
