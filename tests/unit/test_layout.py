"""The package's shape: layers import the right way, module names are unique, and the stage
table, the command line, jobs/ and the README agree."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections import Counter

from webwinnow.app.options import _parser
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
    offenders = [str(p.relative_to(PACKAGE)) for p in MODULES if "pyspark" in _imports(p) and p.parent.name != "stages"]
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


#: The package's floors, lowest first. A module imports from its own folder or from a folder on
#: a floor below; never up, never across. "" is the package's __init__ (the Python API).
FLOORS = (
    ("_checks", "errors", "schemas", "storage"),  # the ground floor: loose modules
    ("core",),
    ("config", ""),
    ("text",),
    ("crawl", "analysis", "index"),
    ("outputs",),
    ("htmlreport",),
    ("explore",),
    ("stages",),
    ("sample",),
    ("app",),
    ("__main__",),
)
FLOOR = {name: i for i, names in enumerate(FLOORS) for name in names}


def _module(path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Every module's imports of other webwinnow modules, lazy ones (inside functions) included."""
    modules = {_module(p): p for p in MODULES}
    graph = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        package = [] if name == "" else package
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = base + (node.module.split(".") if node.module else [])
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "webwinnow":
                target = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:
                candidate = ".".join([*target, alias.name])
                found.add(candidate if candidate in modules else ".".join(target))
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def _folder(module: str) -> str:
    return module.split(".")[0] if "." in module or (PACKAGE / module).is_dir() else module


def test_no_module_imports_itself_through_others():
    graph = _import_graph()
    circles = []
    for start in graph:  # a path from a module's imports back to it
        seen, todo = set(), list(graph[start])
        while todo:
            m = todo.pop()
            if m == start:
                circles.append(start)
                break
            if m not in seen:
                seen.add(m)
                todo.extend(graph[m])
    assert circles == []


def test_imports_run_down_the_floors_never_up_or_across():
    assert set(FLOOR) == {_folder(m) for m in _import_graph()}, "a new folder or loose module: give it a floor"
    wrong = sorted(
        (a, b)
        for a, targets in _import_graph().items()
        for b in targets
        if _folder(a) != _folder(b) and FLOOR[_folder(b)] >= FLOOR[_folder(a)]
    )
    assert wrong == []


def test_at_most_five_modules_are_loose_at_the_top():
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert len(loose) <= 5, loose  # the ground floor and the config; everything else lives in a folder


def test_the_algorithm_core_and_the_maths_have_no_io_layers():
    for folder in ("core", "analysis"):
        for p in (PACKAGE / folder).glob("*.py"):
            if p.name == "diskcache.py":
                continue  # core's one file on disk: the cross-process memo of derived tables (the disk
                # counterpart of Numba's cache=True), which core.charfold alone uses
            assert _imports(p) <= {
                "__future__",
                "numpy",
                "numba",
                "pyarrow",
                "math",
                "dataclasses",
                "typing",
                "collections",
                "functools",
                "unicodedata",
                "operator",
                "numbers",
                "hashlib",
                "pygments",
                "sys",
                "threading",
                "importlib",
            }, p  # hashlib: text keys; pygments: the code unit's
            # lexer: pure computation on a string, like the character table; sys, threading,
            # importlib: core.jit's late dispatchers (the loaded modules, a lock, a lookup)
            # within the package: each other and the argument checks -- no reader, writer or stage
            assert {m for m in _package_imports(p) if not m.startswith(("core", "analysis"))} <= {"_checks"}, p


def test_kernels_take_their_decorator_from_core_jit():
    """Numba's own njit makes a dispatcher (and imports Numba) when a module is imported: a
    kernel decorated with it would bring Numba into every process that imports its module,
    the driver's included (core.jit)."""
    for p in PACKAGE.rglob("*.py"):
        if p == PACKAGE / "core" / "jit.py":
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "numba":
                assert "njit" not in {a.name for a in node.names} and "jit" not in {a.name for a in node.names}, p
            if isinstance(node, ast.Attribute) and node.attr in ("njit", "jit"):
                assert not (isinstance(node.value, ast.Name) and node.value.id == "numba"), p


def test_config_and_the_command_line_load_without_numba_or_pyarrow():
    code = (
        "import sys, webwinnow.config, webwinnow.app.cli, webwinnow.stages; "
        "print(sorted(m for m in ('numba', 'pyarrow', 'numpy', 'pyspark') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONPATH": str(LIB), "PATH": ""}
    )
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
    table = {
        name: (reads, writes, uses, follows) for name, reads, writes, uses, follows in rows if name in {s.name for s in STAGES}
    }

    def names(cell: str) -> tuple[str, ...]:
        return tuple(re.findall(r"`(\w+)`", cell))

    assert list(table) == [s.name for s in STAGES]
    for s in STAGES:
        reads, writes, uses, follows = table[s.name]
        assert names(reads) == s.reads and names(writes) == s.writes and names(uses) == s.uses, s.name
        assert names(follows) == s.follows, s.name


def test_the_command_line_and_jobs_offer_every_stage():
    commands = _parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert list(commands) == ["run", "check", "index", *(s.name for s in STAGES), "paper-tables", "show", "sample"]
    for s in STAGES:
        assert commands[s.name].description is None and s.help in _parser().format_help()
    assert sorted(p.name for p in (REPO / "jobs").iterdir() if p.suffix == ".py") == ["submit.py"]
    done = subprocess.run(
        [sys.executable, str(REPO / "jobs" / "submit.py"), "--help"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(LIB), "PATH": ""},
    )
    assert done.returncode == 0 and all(s.name in done.stdout for s in STAGES)


def test_the_architecture_tree_names_every_module():
    text = (REPO / "docs" / "architecture.md").read_text()
    tree = text[text.index("## Layers") : text.index("## The layering rule")]
    unnamed = [
        str(p.relative_to(PACKAGE))
        for p in MODULES
        if p.name not in ("__init__.py", "__main__.py") and not re.search(rf"(?<![\w/]){re.escape(p.stem)}(\.py)?\b", tree)
    ]
    assert unnamed == []
