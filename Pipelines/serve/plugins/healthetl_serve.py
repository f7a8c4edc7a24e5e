"""Datasette plugin of `make serve` (Pipelines/serve/README.md), loaded with
`--plugins-dir Pipelines/serve/plugins`:

- the canned queries of ../queries.yaml join the served `health` database's metadata (the run's
  metadata.json stays as written; the local file takes precedence), with datasette-mcp's
  `canned_queries` setting on;
- each of those queries is also an MCP tool of its own whose parameters carry their types and
  descriptions, so a client sees `sleep_by_night(start: date, end: date)` rather than a name to
  pass to `execute_canned_query`;
- a request whose Host or Origin names a host other than the loopback ones (or those of
  HEALTHETL_SERVE_ALLOWED_HOSTS) is refused, so a web page cannot reach the server through DNS
  rebinding. The MCP specification requires a local server to check this; datasette-mcp 0.3
  builds its MCP app for host 0.0.0.0, which turns the MCP SDK's own check off, and Datasette
  has none.
"""

import datetime
import inspect
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Optional, Union
from urllib.parse import urlsplit

import yaml
from datasette import hookimpl
from datasette.database import QueryInterrupted
from datasette.utils import sqlite3
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field
from typing_extensions import TypedDict

QUERIES_FILE = Path(__file__).resolve().parent.parent / "queries.yaml"
DATABASE = "health"
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
PARAMETER_TYPES = {"date": datetime.date, "text": str}
NAMED_PARAMETER = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


class QueryResults(TypedDict):
    database: str
    query: str
    columns: list[str]
    rows: list[dict[str, Union[str, int, float, None]]]
    truncated: bool


def load_queries(path: Path = QUERIES_FILE) -> dict[str, Any]:
    """queries.yaml, checked: every parameter a query names in its SQL is in its `params`, every
    one of those is typed in `parameters`, and no query writes. A mistake stops the server at its
    start rather than at a user's question."""
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    parameters, queries = loaded["parameters"], loaded["queries"]
    for name, parameter in parameters.items():
        if parameter.get("type") not in PARAMETER_TYPES:
            raise ValueError(f"{path}: parameters.{name}.type must be one of {sorted(PARAMETER_TYPES)}")
    for name, query in queries.items():
        declared = query.get("params", [])
        used = set(NAMED_PARAMETER.findall(query["sql"]))
        if used != set(declared):
            raise ValueError(f"{path}: queries.{name}: params {sorted(declared)} but the SQL uses {sorted(used)}")
        untyped = [p for p in declared if p not in parameters]
        if untyped:
            raise ValueError(f"{path}: queries.{name}: {untyped} not typed under `parameters`")
        if "write" in query:
            raise ValueError(f"{path}: queries.{name}: a served query never writes (no `write` key)")
        if not query.get("description"):
            raise ValueError(f"{path}: queries.{name} has no description")
    return loaded


def merged(base: dict, extra: dict) -> dict:
    """`extra` over `base`, dictionaries merged key by key."""
    result = dict(base)
    for key, value in extra.items():
        result[key] = merged(result[key], value) if isinstance(value, dict) and isinstance(result.get(key), dict) else value
    return result


def extra_metadata() -> dict:
    """The file HEALTHETL_SERVE_METADATA names (YAML or JSON): what a server exposed beyond
    loopback adds, such as an auth plugin's settings and `allow` blocks (README.md there). The
    run's metadata.json is rewritten by every run, so it cannot hold them."""
    named = os.environ.get("HEALTHETL_SERVE_METADATA")
    if not named:
        return {}
    extra = yaml.safe_load(Path(named).read_text(encoding="utf-8"))
    if not isinstance(extra, dict):
        raise ValueError(f"{named}: HEALTHETL_SERVE_METADATA must name a YAML or JSON object")
    unset = sorted(name for name in environment_names(extra) if name not in os.environ)
    if unset:
        # Datasette would read an unset variable as no value: a token that matches nothing.
        raise ValueError(f"{named} reads the environment variable(s) {', '.join(unset)}: set them")
    return extra


def environment_names(value: Any) -> set[str]:
    """The variables a Datasette setting reads with `{"$env": NAME}`."""
    if isinstance(value, dict):
        if set(value) == {"$env"}:
            return {value["$env"]}
        return set().union(*(environment_names(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(environment_names(v) for v in value))
    return set()


def served_metadata(canned: dict[str, Any]) -> dict:
    return {
        "databases": {
            DATABASE: {
                "queries": {
                    name: {k: query[k] for k in ("title", "description", "sql", "params") if k in query}
                    for name, query in canned["queries"].items()
                }
            }
        },
        "plugins": {"datasette-mcp": {"canned_queries": True}},
    }


try:
    CANNED_QUERIES = load_queries()
    METADATA = merged(served_metadata(CANNED_QUERIES), extra_metadata())
except (OSError, ValueError, yaml.YAMLError) as error:
    # One line and 64, healthetl's code for a configuration file it cannot use (serve/README.md),
    # rather than the traceback of a plugin that failed to load.
    print(f"serve: error: {error}".replace("\n", " "), file=sys.stderr)
    raise SystemExit(64) from None


@hookimpl
def get_metadata(datasette, key, database, table):
    return METADATA


def _cell(value: object) -> Union[str, int, float, None]:
    return value if value is None or isinstance(value, (str, int, float)) else str(value)


async def _allowed(datasette, actor: Optional[dict], query: str) -> bool:
    """Datasette's own checks for a canned query page: see the database, see the query."""
    return await datasette.permission_allowed(actor, "view-database", DATABASE, default=True) and (
        await datasette.permission_allowed(actor, "view-query", (DATABASE, query), default=True)
    )


def query_tool(datasette, name: str, query: dict[str, Any], parameters: dict[str, Any]):
    """An MCP tool function for one canned query: its signature types each parameter (a date is
    checked and passed to SQL as YYYY-MM-DD) and says what it means."""
    signature = []
    for parameter_name in query.get("params", []):
        parameter = parameters[parameter_name]
        annotation = Annotated[PARAMETER_TYPES[parameter["type"]], Field(description=parameter["description"])]
        default = "" if parameter.get("optional") else inspect.Parameter.empty
        signature.append(inspect.Parameter(parameter_name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                           annotation=annotation))
    signature.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context))

    async def run(ctx: Context, **arguments: Any) -> QueryResults:
        scope = getattr(ctx.request_context.request, "scope", None)
        actor = scope.get("actor") if isinstance(scope, dict) else None
        if DATABASE not in datasette.databases or not await _allowed(datasette, actor, name):
            raise ToolError(f"Query {name!r} is not available: the database {DATABASE!r} is not served to you.")
        values = {k: v.isoformat() if isinstance(v, datetime.date) else v for k, v in arguments.items()}
        try:
            results = await datasette.get_database(DATABASE).execute(query["sql"], values, truncate=True,
                                                                      log_sql_errors=False)
        except QueryInterrupted:
            raise ToolError("The query exceeded the server's time limit (sql_time_limit_ms).") from None
        except (sqlite3.DatabaseError, sqlite3.Warning) as error:
            raise ToolError(f"SQL error: {error}") from None
        return {
            "database": DATABASE,
            "query": name,
            "columns": results.columns,
            "rows": [{column: _cell(value) for column, value in zip(results.columns, row)} for row in results.rows],
            "truncated": results.truncated,
        }

    run.__name__ = name
    run.__signature__ = inspect.Signature(signature, return_annotation=QueryResults)
    run.__annotations__ = {p.name: p.annotation for p in signature} | {"return": QueryResults}
    return run


@hookimpl
def register_mcp_tools(datasette, mcp):
    cut = f" Rows beyond {datasette.setting('max_returned_rows')} are cut off; `truncated` then says so."
    for name, query in CANNED_QUERIES["queries"].items():
        mcp.add_tool(query_tool(datasette, name, query, CANNED_QUERIES["parameters"]), name=name, title=query.get("title"),
                     description=query["description"] + cut,
                     annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))


def allowed_hosts() -> frozenset[str]:
    extra = os.environ.get("HEALTHETL_SERVE_ALLOWED_HOSTS", "")
    return LOOPBACK_HOSTS | {host.strip().lower() for host in extra.split(",") if host.strip()}


def _hostname(url: str) -> Optional[str]:
    """The host a Host header (`name:port`) or an Origin (`scheme://name:port`) names."""
    try:
        return urlsplit(url if "//" in url else "//" + url).hostname
    except ValueError:
        return None


@hookimpl
def asgi_wrapper(datasette):
    def wrap(app):
        async def checked(scope, receive, send):
            if scope["type"] == "http":
                headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
                allowed = allowed_hosts()
                refusal = None
                if _hostname(headers.get("host", "")) not in allowed:
                    refusal = (421, f"Host {headers.get('host', '')!r}")
                elif "origin" in headers and _hostname(headers["origin"]) not in allowed:
                    refusal = (403, f"Origin {headers['origin']!r}")
                if refusal is not None:
                    status, what = refusal
                    body = (f"healthetl serve: {what} is not allowed; the server answers only requests to "
                            f"{', '.join(sorted(allowed))}. Add a name you serve it under to "
                            f"HEALTHETL_SERVE_ALLOWED_HOSTS (comma-separated).\n").encode()
                    await send({"type": "http.response.start", "status": status,
                                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                            (b"content-length", str(len(body)).encode())]})
                    await send({"type": "http.response.body", "body": body})
                    return
            await app(scope, receive, send)

        return checked

    return wrap
