"""The package's shape: layers import the right way, module names are unique, and the stage
table, the command line, jobs/ and the README agree."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections import Counter

from webwinnow.cli import _parser
from webwinnow.stages import STAGES

from paths import LIB, REPO

PACKAGE = LIB / "webwinnow"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _imports(path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_nothing_outside_the_stages_imports_pyspark():
    offenders = [str(p.relative_to(PACKAGE)) for p in MODULES
                 if "pyspark" in _imports(p) and p.parent.name != "stages"]
    assert offenders == []


def _package_imports(path) -> set[str]:
    """The webwinnow modules a module imports relatively, as paths from the package root."""
    here = path.relative_to(PACKAGE).parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = here[: len(here) - (node.level - 1)]
            names = [node.module] if node.module else [a.name for a in node.names]
            found |= {"/".join((*base, *n.split("."))) for n in names}
    return found


def test_the_algorithm_core_and_the_maths_have_no_io_layers():
    for folder in ("core", "analysis"):
        for p in (PACKAGE / folder).glob("*.py"):
            assert _imports(p) <= {"__future__", "numpy", "numba", "pyarrow", "math", "dataclasses", "typing",
                                   "collections", "functools", "unicodedata", "operator", "numbers",
                                   "hashlib", "pygments"}, p  # hashlib: text keys; pygments: the code unit's
            # lexer: pure computation on a string, like the character table
            # within the package: each other, the argument checks, and the cross-process memo of
            # derived tables (the disk counterpart of Numba's cache=True) -- no reader, writer or stage
            assert {m for m in _package_imports(p) if not m.startswith(("core", "analysis"))} <= \
                {"_checks", "diskcache"}, p


def test_config_and_the_command_line_load_without_numba_or_pyarrow():
    code = ("import sys, webwinnow.config, webwinnow.cli, webwinnow.stages; "
            "print(sorted(m for m in ('numba', 'pyarrow', 'numpy', 'pyspark') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(LIB), "PATH": ""})
    assert done.stdout.strip() == "[]"


def test_module_names_are_unique_and_short():
    names = Counter(p.name for p in MODULES if p.name not in ("__init__.py", "__main__.py"))
    assert [n for n, c in names.items() if c > 1] == []
    assert [(str(p.relative_to(PACKAGE)), n) for p in MODULES if (n := len(p.read_text().splitlines())) > 700] == []


def test_every_kernel_uses_the_one_set_of_numba_options():
    for p in MODULES:
        for line in p.read_text().splitlines():
            if line.strip().startswith("@njit") or line.strip().startswith("@jit"):
                assert line.strip() == "@njit(**JIT_OPTIONS)", (p, line)


def test_the_readme_stage_table_is_the_stage_table():
    readme = (REPO / "README.md").read_text()
    rows = re.findall(r"^\| (\w+) \|([^|]+)\|([^|]+)\|([^|]*)\|([^|]*)\|$", readme, re.M)
    table = {name: (reads, writes, uses, follows) for name, reads, writes, uses, follows in rows
             if name in {s.name for s in STAGES}}

    def names(cell: str) -> tuple[str, ...]:
        return tuple(re.findall(r"`(\w+)`", cell))

    assert list(table) == [s.name for s in STAGES]
    for s in STAGES:
        reads, writes, uses, follows = table[s.name]
        assert names(reads) == s.reads and names(writes) == s.writes and names(uses) == s.uses, s.name
        assert names(follows) == s.follows, s.name


def test_the_command_line_and_jobs_offer_every_stage():
    commands = _parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert list(commands) == ["run", "check", "index", *(s.name for s in STAGES), "paper-tables", "sample"]
    for s in STAGES:
        assert commands[s.name].description is None and s.help in _parser().format_help()
    assert sorted(p.name for p in (REPO / "jobs").iterdir() if p.suffix == ".py") == ["submit.py"]
    done = subprocess.run([sys.executable, str(REPO / "jobs" / "submit.py"), "--help"], capture_output=True,
                          text=True, env={"PYTHONPATH": str(LIB), "PATH": ""})
    assert done.returncode == 0 and all(s.name in done.stdout for s in STAGES)
