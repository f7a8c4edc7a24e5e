#!/usr/bin/env python3
"""Keep the folders of a Swift module a one-way dependency graph.

Usage:
    python3 Tests/Tools/check_layers.py Sources/HealthETL   # exit 1 and one line per violation
    python3 Tests/Tools/check_layers.py --print-order       # the layer order, lowest first

Exit status: 0 clean, 1 backward references or layout errors, 2 usage error.

Each top-level folder of the module is a layer; LAYER_ORDER below is the only place that says
which layers exist and in what order. A file may use types declared in its own folder or in a
folder listed before it, never in one listed after it. A folder missing from LAYER_ORDER, or a
`.swift` file directly in the module root, is an error too, so the list stays the truth. Folders
of the list that do not exist (yet) are fine. Sub-folders belong to their top-level folder.

How a file is read. Comments (`//`, nested `/* */`) and string literals (`"..."`, `\"\"\"...\"\"\"`,
raw `#"..."#` with any number of `#`, and `#/regex/#` literals) are blanked before anything is
looked at, so a type named in a comment or a string is never a reference. The code inside a
string interpolation, `\\( ... )` or `\\#( ... )` in a raw string, IS code and is checked,
including strings and comments nested inside it. Line breaks are kept, so line numbers are exact.

Which declarations a layer exports. Only top-level `struct|class|enum|protocol|actor|typealias`
declarations that are not `private`/`fileprivate`. A nested type (`SleepNightAggregator.Table`,
`StatisticsJob.Destination`) is never reported under its own name, because Swift only resolves a
bare nested name inside its enclosing type (or an extension of it); anywhere else it must be
written `Outer.Nested`, and that names `Outer`, which is checked. So reusing `Table`, `Output`,
`Result` or `Destination` as nested names in many folders produces no report at all.

What counts as a reference. Every identifier in the blanked code that equals an exported name,
except a name right after a member dot (`x.Sample` is a member of `x`, not the type `Sample`;
`HealthETL.Sample`, the module-qualified form, does count) and the name being declared.
`extension Foo` is a reference to `Foo`, so extending a higher layer's type from a lower one is
reported.

When a reference is reported. A reference from a file in layer L to a name N is reported when N
is exported by a layer above L and N is NOT declared, at any nesting level, in layer L or below,
and is not a generic parameter or private top-level type of the file itself. The second
condition is deliberately generous: a lower layer that declares its own nested `N` may well be
resolving to it, and a checker that guesses wrong there blocks `make lint` for nothing. The
price is a possible missed report when a lower layer's nested `N` does not actually shadow a
higher layer's top-level `N`; `--verbose` lists every such suppressed reference so it can be
looked at. One report per type per line.

What this cannot see (it reads text, it does not type-check): a higher layer's type that is used
without being named (`let x = higher.make()`, `.init(...)` on an inferred type, a member
reached through a value), and bare `/regex/` literals (only `#/.../#` is blanked).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass, field

# The one place the layer order lives, lowest first. README's layout section follows it;
# `--print-order` prints it so the two can be compared.
LAYER_ORDER: tuple[str, ...] = (
    "Support",
    "Output/Files",
    "Output/Tables",
    "Output/Database",
    "Output/Workbook",
    "Staging",
    "Shared",
    "Pipeline",
    "Samples",
    "Elements",
    "Sleep",
    "Workouts",
    "Statistics",
    "Beats",
    "Electrocardiograms",
    "ClinicalRecords",
    "Mindful",
    "Daily",
    "Report",
    "Plan",
    "Delivery",
    "Run",
)

MODULE_NAME_DEFAULT = "HealthETL"

TYPE_KEYWORDS = frozenset({"struct", "class", "enum", "protocol", "actor", "typealias"})
# Names that only shadow (they are never exported): associated types of protocols.
SHADOW_KEYWORDS = frozenset({"associatedtype"})
DECL_MODIFIERS = frozenset(
    {
        "public", "internal", "private", "fileprivate", "package", "open", "final", "indirect",
        "nonisolated", "static", "override", "required", "convenience", "dynamic", "lazy",
        "mutating", "nonmutating", "weak", "unowned", "optional", "consuming", "borrowing",
        "distributed", "isolated", "sending",
    }
)
# A word after `class`/`actor`/`enum`... that shows it is not introducing a type name
# (`class func`, `class var`, `protocol P: class {`).
NOT_A_NAME = frozenset(
    {
        "func", "var", "let", "subscript", "init", "deinit", "override", "final", "static",
        "private", "fileprivate", "public", "internal", "open", "package", "case", "where",
        "in", "nonisolated",
    }
)


def order_text(order: tuple[str, ...] = LAYER_ORDER) -> str:
    return " < ".join(order)


# ---------------------------------------------------------------------------------------------
# Blanking comments and strings


def blank_comments_and_strings(src: str) -> str:
    """Return `src` with comments and string/regex literal text replaced by spaces.

    Newlines are kept, so offsets and line numbers are unchanged; the code of string
    interpolations is kept (itself blanked recursively).
    """
    out = list(src)
    n = len(src)

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    def block_comment_end(i: int) -> int:
        # `i` is at "/*"; Swift block comments nest.
        depth = 0
        while i < n:
            if src.startswith("/*", i):
                depth += 1
                i += 2
            elif src.startswith("*/", i):
                depth -= 1
                i += 2
                if depth == 0:
                    return i
            else:
                i += 1
        return n

    def string_end(i: int, hashes: int) -> int:
        # `i` is at the opening quote (after any `#`s); the `#`s before it are blanked by the
        # caller. Returns the index just after the closing delimiter.
        multiline = src.startswith('"""', i)
        quote = '"""' if multiline else '"'
        close = quote + "#" * hashes
        escape = "\\" + "#" * hashes
        segment = i
        j = i + len(quote)
        while j < n:
            if src.startswith(escape, j):
                k = j + len(escape)
                if k < n and src[k] == "(":
                    blank(segment, k + 1)
                    close_paren = code_end(k + 1, inside_parens=True)
                    segment = close_paren  # the `)` itself is blanked with the next segment
                    j = close_paren + 1
                    continue
                j = k + 1  # an escaped character (`\"`, `\\`, `\#"` in a raw string)
                continue
            if src.startswith(close, j):
                j += len(close)
                blank(segment, j)
                return j
            if not multiline and src[j] == "\n":
                break  # unterminated single-line string: the compiler rejects it anyway
            j += 1
        blank(segment, j)
        return j

    def regex_end(i: int, hashes: int) -> int:
        # `i` is at the `/` after `hashes` `#`s of an extended regex literal `#/.../#`.
        close = "/" + "#" * hashes
        j = src.find(close, i + 1)
        return n if j < 0 else j + len(close)

    def code_end(i: int, inside_parens: bool) -> int:
        # Scans code from `i`; inside an interpolation, stops at the `)` that closes it and
        # returns its index.
        depth = 0
        while i < n:
            c = src[i]
            if c == "/" and src.startswith("//", i):
                j = src.find("\n", i)
                j = n if j < 0 else j
                blank(i, j)
                i = j
                continue
            if c == "/" and src.startswith("/*", i):
                j = block_comment_end(i)
                blank(i, j)
                i = j
                continue
            if c == '"':
                i = string_end(i, 0)
                continue
            if c == "#":
                j = i
                while j < n and src[j] == "#":
                    j += 1
                hashes = j - i
                if j < n and src[j] == '"':
                    blank(i, j)
                    i = string_end(j, hashes)
                    continue
                if j < n and src[j] == "/":
                    end = regex_end(j, hashes)
                    blank(i, end)
                    i = end
                    continue
                i = j
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                if inside_parens and depth == 0:
                    return i
                depth -= 1
            i += 1
        return n

    code_end(0, inside_parens=False)
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Tokens and declarations

# A `backticked` name, a plain name, or punctuation that matters here; `..`/`...` stay one token
# so a range is not taken for a member dot.
TOKEN_RE = re.compile(
    r"`([A-Za-z_][A-Za-z0-9_]*)`|([A-Za-z_][A-Za-z0-9_]*)|(\.{2,}|[{}<>().,:@=&])"
)


@dataclass(frozen=True)
class Token:
    text: str
    offset: int
    is_name: bool
    member: bool  # right after a single member dot


@dataclass
class SwiftFile:
    path: str  # as shown in reports
    rel: str  # relative to the module root, e.g. "Workouts/WorkoutRow.swift"
    layer: str
    line_starts: list[int]
    tokens: list[Token]
    exported: dict[str, int] = field(default_factory=dict)  # name -> token index
    declared: set[str] = field(default_factory=set)  # every type name declared, any level
    file_local: set[str] = field(default_factory=set)  # generic parameters, private top-level
    declaration_tokens: set[int] = field(default_factory=set)

    def line_of(self, offset: int) -> int:
        lo, hi = 0, len(self.line_starts)
        while lo + 1 < hi:
            mid = (lo + hi) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid
        return lo + 1


def tokenize(code: str, module: str) -> list[Token]:
    tokens: list[Token] = []
    previous: Token | None = None
    before_previous: Token | None = None
    for m in TOKEN_RE.finditer(code):
        quoted, plain, punct = m.groups()
        if punct is not None:
            tok = Token(punct, m.start(), False, False)
        else:
            # `a.b`, also across a line break (`foo\n  .Bar`), but not `...`/`..<`.
            member = previous is not None and previous.text == "." and not (
                before_previous is not None and before_previous.text == module
                and before_previous.is_name
            )
            tok = Token(quoted or plain, m.start(), True, member)
        tokens.append(tok)
        before_previous, previous = previous, tok
    return tokens


def is_private(tokens: list[Token], k: int) -> bool:
    """Whether the declaration whose keyword is tokens[k] carries `private`/`fileprivate`."""
    j = k - 1
    while j >= 0:
        t = tokens[j]
        if t.is_name and t.text in ("private", "fileprivate"):
            return True
        if t.is_name and t.text in DECL_MODIFIERS:
            j -= 1
            continue
        if t.text == ")":  # `@available(...)`, `private(set)`
            depth = 0
            while j >= 0:
                if tokens[j].text == ")":
                    depth += 1
                elif tokens[j].text == "(":
                    depth -= 1
                    if depth == 0:
                        break
                j -= 1
            j -= 1
            continue
        if t.is_name and j >= 1 and tokens[j - 1].text == "@":
            j -= 2
            continue
        return False
    return False


def generic_parameters(tokens: list[Token], k: int) -> list[str]:
    """Names in `<A, B: P>` right after tokens[k] (a declared name), if any."""
    if k + 1 >= len(tokens) or tokens[k + 1].text != "<":
        return []
    names: list[str] = []
    depth = 0
    expect_name = True
    for t in tokens[k + 1 :]:
        if t.text == "<":
            depth += 1
            expect_name = depth == 1
        elif t.text == ">":
            depth -= 1
            if depth == 0:
                break
        elif t.text == "," and depth == 1:
            expect_name = True
        elif t.text in ("{", "}", "("):
            break  # not a generic clause after all
        elif t.is_name and expect_name and depth == 1:
            names.append(t.text)
            expect_name = False
        else:
            expect_name = False
    return names


def read_declarations(f: SwiftFile) -> None:
    tokens = f.tokens
    depth = 0
    for k, t in enumerate(tokens):
        if t.text == "{":
            depth += 1
            continue
        if t.text == "}":
            depth = max(0, depth - 1)
            continue
        if not t.is_name or t.member or k + 1 >= len(tokens):
            continue
        nxt = tokens[k + 1]
        if t.text in ("init", "subscript"):
            f.file_local.update(generic_parameters(tokens, k))
            continue
        if not nxt.is_name or nxt.text in NOT_A_NAME:
            continue
        if t.text == "func":
            f.file_local.update(generic_parameters(tokens, k + 1))
            continue
        if t.text in SHADOW_KEYWORDS:
            f.declared.add(nxt.text)
            f.declaration_tokens.add(k + 1)
            continue
        if t.text not in TYPE_KEYWORDS:
            continue
        if k >= 1 and tokens[k - 1].text == "@":
            continue  # an attribute that happens to share the word
        name = nxt.text
        f.declaration_tokens.add(k + 1)
        f.file_local.update(generic_parameters(tokens, k + 1))
        if depth == 0 and is_private(tokens, k):
            f.file_local.add(name)
            continue
        f.declared.add(name)
        if depth == 0:
            f.exported.setdefault(name, k + 1)


# ---------------------------------------------------------------------------------------------
# The check


@dataclass
class Report:
    violations: list[str]
    errors: list[str]
    suppressed: list[str]
    files: int


def load(root: str, module: str) -> tuple[list[SwiftFile], list[str]]:
    files: list[SwiftFile] = []
    errors: list[str] = []

    def walk(full: str, layer: str) -> None:
        for dirpath, dirnames, filenames in os.walk(full):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(".swift"):
                    path = os.path.join(dirpath, name)
                    files.append(parse_file(path, os.path.relpath(path, root), layer, module))

    def not_listed(full: str, name: str) -> str:
        return (
            f"{full}: folder {name} is not in the layer order; add it to LAYER_ORDER "
            f"in {os.path.relpath(__file__)} (order: {order_text()})"
        )

    def outside(full: str) -> str:
        return f"{full}: file is outside every layer folder; move it into one of: {order_text()}"

    for entry in sorted(os.listdir(root)):
        full = os.path.join(root, entry)
        if os.path.isdir(full):
            if entry in LAYER_ORDER:
                walk(full, entry)
                continue
            # A folder of layers (`Output/Files`, `Output/Tables`): each sub-folder is a layer.
            if not any(layer.startswith(entry + "/") for layer in LAYER_ORDER):
                errors.append(not_listed(full, entry))
                continue
            for sub in sorted(os.listdir(full)):
                sub_full = os.path.join(full, sub)
                name = entry + "/" + sub
                if os.path.isdir(sub_full):
                    if name in LAYER_ORDER:
                        walk(sub_full, name)
                    else:
                        errors.append(not_listed(sub_full, name))
                elif sub.endswith(".swift"):
                    errors.append(outside(sub_full))
        elif entry.endswith(".swift"):
            errors.append(outside(full))
    return files, errors


def parse_file(path: str, rel: str, layer: str, module: str) -> SwiftFile:
    with open(path, encoding="utf-8") as handle:
        src = handle.read()
    code = blank_comments_and_strings(src)
    line_starts = [0] + [m.end() for m in re.finditer("\n", src)]
    f = SwiftFile(path, rel.replace(os.sep, "/"), layer, line_starts, tokenize(code, module))
    read_declarations(f)
    return f


def check(root: str, module: str = MODULE_NAME_DEFAULT) -> Report:
    files, errors = load(root, module)
    rank = {name: i for i, name in enumerate(LAYER_ORDER)}
    exported_by: dict[str, SwiftFile] = {}
    declared_in: dict[str, set[int]] = {}
    for f in files:
        for name in f.exported:
            exported_by.setdefault(name, f)
        for name in f.declared:
            declared_in.setdefault(name, set()).add(rank[f.layer])
    violations: list[str] = []
    suppressed: list[str] = []
    for f in files:
        here = rank[f.layer]
        seen: set[tuple[int, str]] = set()
        for k, t in enumerate(f.tokens):
            if not t.is_name or t.member or k in f.declaration_tokens:
                continue
            owner = exported_by.get(t.text)
            if owner is None or rank[owner.layer] <= here or t.text in f.file_local:
                continue
            line = f.line_of(t.offset)
            if (line, t.text) in seen:
                continue
            seen.add((line, t.text))
            shadows = sorted(r for r in declared_in.get(t.text, ()) if r <= here)
            if shadows:
                suppressed.append(
                    f"{f.path}:{line}: {t.text} not reported: also declared in "
                    f"{', '.join(LAYER_ORDER[r] for r in shadows)}"
                )
                continue
            violations.append(
                f"{f.path}:{line}: {t.text} is declared in {owner.rel}, a layer above "
                f"{f.layer} (order: {order_text()})"
            )
    return Report(violations, errors, suppressed, len(files))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Report references from a layer folder to a type declared in a higher one."
    )
    parser.add_argument("root", nargs="?", help="the module's folder, e.g. Sources/HealthETL")
    parser.add_argument(
        "--print-order", action="store_true", help="print the layer order, lowest first"
    )
    parser.add_argument(
        "--module",
        default=None,
        help="module name for `Module.Type` references (default: the root folder's name)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="also list (on stderr) references left out because a lower layer declares the name",
    )
    args = parser.parse_args(argv)
    if args.print_order:
        print("\n".join(LAYER_ORDER))
        return 0
    if not args.root:
        parser.error("give the module's source folder, e.g. Sources/HealthETL")
    if not os.path.isdir(args.root):
        print(f"check_layers: {args.root} is not a folder", file=sys.stderr)
        return 2
    module = args.module or os.path.basename(os.path.normpath(args.root))
    started = time.perf_counter()
    report = check(args.root, module)
    elapsed = time.perf_counter() - started
    for line in report.errors + report.violations:
        print(line)
    if args.verbose:
        for line in report.suppressed:
            print(line, file=sys.stderr)
    problems = len(report.errors) + len(report.violations)
    print(
        f"check_layers: {report.files} files, {len(report.violations)} backward references, "
        f"{len(report.errors)} layout errors, {elapsed:.2f}s",
        file=sys.stderr,
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
