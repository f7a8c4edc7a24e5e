#!/bin/sh
# Serves a run's health.sqlite with Datasette and the MCP endpoint /-/mcp (Pipelines/serve/README.md):
#   Pipelines/serve/serve.sh OUT [datasette serve options, e.g. --port 8002]
# DATASETTE names the datasette program (make serve: .build/serve-venv/bin/datasette), else the
# one on PATH. Options given after OUT come last, so they win (a second --host, --port, --setting).
#
# --immutable: nothing can write to the file, whatever a query or a plugin asks.
# num_sql_threads 1: the one connection is opened at the start, so the server answers from that
# database alone even when a later run (or a night) swaps a new out/ in; with more threads, each
# opened later would read the new file and answers would mix two runs. Restart to serve a new run.
set -eu
out=${1:?usage: serve.sh OUT_DIR [datasette serve options]}
shift
if [ ! -f "$out/health.sqlite" ] || [ ! -f "$out/metadata.json" ]; then
  echo "serve: $out has no health.sqlite and metadata.json; write them first: healthetl run --out $out EXPORT (make run)" >&2
  exit 66
fi
exec "${DATASETTE:-datasette}" serve --immutable "$out/health.sqlite" --metadata "$out/metadata.json" \
  --plugins-dir "$(dirname "$0")/plugins" --setting num_sql_threads 1 --host 127.0.0.1 --port 8001 "$@"
