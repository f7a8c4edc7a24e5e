"""The layer checker (Tests/Tools/check_layers.py) run as `make lint` runs it, on planted trees
and on the real Sources/HealthETL."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECKER = REPO / "Tests" / "Tools" / "check_layers.py"


def run_checker(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(CHECKER), *args], capture_output=True, text=True, timeout=60
    )


class FakeTree:
    """A module folder named HealthETL in a temporary directory, filled file by file."""

    def __init__(self, test: unittest.TestCase):
        self._tmp = tempfile.TemporaryDirectory()
        test.addCleanup(self._tmp.cleanup)
        self.root = Path(self._tmp.name) / "HealthETL"
        self.root.mkdir()

    def write(self, rel: str, source: str) -> str:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
        return str(path)

    def check(self, *extra: str) -> subprocess.CompletedProcess:
        return run_checker(*extra, str(self.root))


class LayerCheckerTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        printed = run_checker("--print-order")
        assert printed.returncode == 0, printed.stderr
        cls.order = printed.stdout.split()
        cls.order_text = " < ".join(cls.order)

    def expected(self, path: str, line: int, name: str, declared_in: str, layer: str) -> str:
        return (
            f"{path}:{line}: {name} is declared in {declared_in}, a layer above {layer} "
            f"(order: {self.order_text})"
        )

    def high_layer(self, tree: FakeTree) -> None:
        tree.write(
            "Run/HighThing.swift",
            """
            /// The top layer's type that lower layers must not name.
            public struct HighThing {
              public static let zero = HighThing()
              public enum Table { case a }
              public struct Destination {}
            }

            public enum Destination {}
            private struct Hidden {}
            private struct Formatter {}
            """,
        )

    def test_every_layer_of_the_order_is_a_folder_of_the_module(self):
        # The checker refuses a folder missing from the order; this keeps the order free of
        # layers that no longer exist (a moved subject left behind in the list).
        module = REPO / "Sources" / "HealthETL"
        missing = [layer for layer in self.order if not (module / layer).is_dir()]
        self.assertEqual(missing, [])

    def test_reports_a_planted_backward_reference(self):
        tree = FakeTree(self)
        self.high_layer(tree)
        low = tree.write(
            "Support/Low.swift",
            """
            import Foundation
            /* a nested /* comment */ HighThing */
            func make() -> HighThing { HighThing() }
            """,
        )
        result = tree.check()
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertEqual(
            result.stdout.splitlines(),
            [self.expected(low, 3, "HighThing", "Run/HighThing.swift", "Support")],
        )

    def test_reports_a_reference_inside_a_string_interpolation(self):
        tree = FakeTree(self)
        self.high_layer(tree)
        low = tree.write(
            "Staging/Log.swift",
            """
            func describe() -> String {
              let plain = "nothing here"
              return "value \\(String(describing: HighThing.zero)) end \\(plain)"
            }
            let raw = #"raw \\#(HighThing.zero) end"#
            """,
        )
        result = tree.check()
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertEqual(
            result.stdout.splitlines(),
            [
                self.expected(low, 3, "HighThing", "Run/HighThing.swift", "Staging"),
                self.expected(low, 5, "HighThing", "Run/HighThing.swift", "Staging"),
            ],
        )

    def test_the_same_code_in_comments_and_strings_is_not_a_reference(self):
        tree = FakeTree(self)
        self.high_layer(tree)
        tree.write(
            "Support/Quiet.swift",
            '''
            // func make() -> HighThing { HighThing() }
            /// Returns a `HighThing`.
            /* outer /* nested */ HighThing() */
            let a = "func make() -> HighThing { HighThing() }"
            let b = "escaped \\" HighThing \\" still a string"
            let c = """
              HighThing() and "HighThing" and \\"""
              """
            let d = #"a raw \\(HighThing) is not an interpolation"#
            let e = ##"raw with "# inside HighThing"##
            let f = "interpolated \\("HighThing" /* HighThing */) text"
            ''',
        )
        result = tree.check()
        self.assertEqual((result.returncode, result.stdout), (0, ""), result.stderr)

    def test_extending_a_higher_type_from_a_lower_layer_is_reported(self):
        tree = FakeTree(self)
        self.high_layer(tree)
        low = tree.write(
            "Output/Tables/Ext.swift",
            """
            extension
              HighThing {
              var doubled: Int { 2 }
            }
            """,
        )
        result = tree.check()
        self.assertEqual(result.returncode, 1)
        self.assertEqual(
            result.stdout.splitlines(),
            [self.expected(low, 2, "HighThing", "Run/HighThing.swift", "Output/Tables")],
        )

    def test_reused_nested_names_members_and_generic_parameters_are_not_reported(self):
        tree = FakeTree(self)
        self.high_layer(tree)
        tree.write(
            "Sleep/Writer.swift",
            """
            public final class Writer {
              // `Table` is nested in Run's HighThing too; bare, it can only mean this one.
              public enum Table: String { case nights }
              // Run has a top-level `Destination`; this layer declares its own nested one.
              public typealias Destination = [Table]
              let destination: Destination = []
            }
            struct Box<HighThing> { let value: HighThing }
            private struct Hidden {}
            func use(_ x: Hidden) -> Hidden { x }
            """,
        )
        tree.write(
            "Sleep/Member.swift",
            """
            import Foundation

            // A member that shares a type's name, and Foundation's `Formatter`, which Run's
            // private `Formatter` cannot be.
            func use(_ w: Writer, _ f: Formatter) -> Any { w.HighThing as Any }
            """,
        )
        result = tree.check("--verbose")
        self.assertEqual((result.returncode, result.stdout), (0, ""), result.stderr)
        # The shadowed `Destination` is not reported but is listed for a human to look at.
        self.assertIn(
            "Writer.swift:6: Destination not reported: also declared in Sleep", result.stderr
        )

    def test_qualified_nested_and_module_qualified_names_name_their_outer_type(self):
        tree = FakeTree(self)
        self.high_layer(tree)
        low = tree.write(
            "Shared/Use.swift",
            """
            let table: HealthETL.HighThing.Table = .a
            let other = Swift.Result<Int, Never>.success(1)
            """,
        )
        result = tree.check()
        self.assertEqual(result.returncode, 1)
        self.assertEqual(
            result.stdout.splitlines(),
            [self.expected(low, 1, "HighThing", "Run/HighThing.swift", "Shared")],
        )

    def test_same_layer_and_downward_references_pass(self):
        tree = FakeTree(self)
        tree.write("Support/Hash.swift", "enum FastHash { static func of(_: String) -> Int { 0 } }")
        tree.write("Staging/Sample.swift", 'struct Sample { let h = FastHash.of("x") }')
        tree.write("Staging/Catalog.swift", "final class Catalog { var samples: [Sample] = [] }")
        tree.write("Run/Job.swift", "enum Job { static func f(_ c: Catalog) -> [Sample] { [] } }")
        result = tree.check()
        self.assertEqual((result.returncode, result.stdout), (0, ""), result.stderr)

    def test_the_folders_of_a_folder_of_layers_are_layers_in_their_own_order(self):
        tree = FakeTree(self)
        tree.write("Output/Workbook/Book.swift", "public final class Book {}\n")
        # Files come before Workbook: naming the workbook from the transaction's folder is a cycle.
        low = tree.write("Output/Files/Transaction.swift", "final class Transaction { var book: Book? }\n")
        tree.write("Output/Tables/Writer.swift", "struct Writer { let t: Transaction }\n")
        loose = tree.write("Output/Loose.swift", "enum Loose {}\n")
        unlisted = tree.root / "Output" / "Charts"
        tree.write("Output/Charts/Chart.swift", "enum Chart {}\n")
        result = tree.check()
        self.assertEqual(result.returncode, 1)
        lines = result.stdout.splitlines()
        self.assertEqual(len(lines), 3, result.stdout)
        self.assertTrue(lines[0].startswith(f"{unlisted}: folder Output/Charts is not in the layer order"), lines[0])
        self.assertTrue(lines[1].startswith(f"{loose}: file is outside every layer folder"), lines[1])
        self.assertEqual(
            lines[2], self.expected(low, 1, "Book", "Output/Workbook/Book.swift", "Output/Files")
        )

    def test_a_folder_missing_from_the_order_and_a_loose_file_are_errors(self):
        tree = FakeTree(self)
        tree.write("Support/Hash.swift", "enum FastHash {}\n")
        tree.write("Helpers/Misc.swift", "enum Misc {}\n")
        loose = tree.write("Loose.swift", "enum Loose {}\n")
        result = tree.check()
        self.assertEqual(result.returncode, 1)
        lines = result.stdout.splitlines()
        self.assertEqual(len(lines), 2, result.stdout)
        helpers = tree.root / "Helpers"
        self.assertTrue(
            lines[0].startswith(f"{helpers}: folder Helpers is not in the layer order"), lines[0]
        )
        self.assertTrue(
            lines[1].startswith(f"{loose}: file is outside every layer folder"), lines[1]
        )

    def test_the_real_module_is_a_one_way_graph(self):
        result = run_checker(str(REPO / "Sources" / "HealthETL"))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)


if __name__ == "__main__":
    unittest.main()
