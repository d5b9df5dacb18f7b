"""Give a freshly installed webwinnow the compiled kernels of a checkout (package.py --kernels-from-repo).

    ENV/bin/python tests/cluster/seed_kernels.py REPO/lib/webwinnow

Run by the packed environment's interpreter. Numba keeps each kernel's cache in the __pycache__
folder beside its source file, stamped with a hash of that file's bytes and with Numba's version;
the wheel installs byte-identical sources, so the checkout's cache files are valid for the
installed package as they are. This copies the index (.nbi) of every kernel whose stamp and
version match, and the compiled files (.nbc) it lists, then loads every listed signature through
the installed dispatchers and counts how many came from disk. It also imports every module of
the installed package (none may be missing from the wheel) and builds or loads the normalization
table into the package's own disk cache.

Exit 0 when every cached kernel of the installed package has at least one signature and every
signature was loaded without compiling; 1 otherwise (package.py then warms up with a pipeline run).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import pickle
import shutil
import sys
from pathlib import Path


def _index(path: Path) -> tuple[str, bytes, dict]:
    """Numba's index file: its version, then the pickled (source stamp, {key: data file name})."""
    with open(path, "rb") as f:
        version = pickle.load(f)
        stamp, overloads = pickle.loads(f.read())
    return version, stamp, overloads


def main(argv: list[str]) -> int:
    source = Path(argv[0]).resolve()
    os.environ.pop("NUMBA_CACHE_DIR", None)  # the cache must land beside the installed sources, to be packed

    import numba
    from numba.core.dispatcher import Dispatcher

    import webwinnow

    package = Path(webwinnow.__file__).resolve().parent
    if package == source:
        print(f"seed-kernels: {package} is the checkout itself, not an installed copy", file=sys.stderr)
        return 1
    copied = stale = 0
    for index in sorted(source.rglob("__pycache__/*.nbi")):
        rel = index.relative_to(source)
        module_file = package / rel.parent.parent / (index.name.split(".", 1)[0] + ".py")
        try:
            version, stamp, overloads = _index(index)
        except Exception:  # noqa: BLE001 - a damaged or foreign index is simply not used
            stale += 1
            continue
        if (
            version != numba.__version__
            or not module_file.is_file()
            or stamp != hashlib.sha256(module_file.read_bytes()).digest()
        ):
            stale += 1
            continue
        target = package / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        for name in overloads.values():
            shutil.copyfile(index.parent / name, target.parent / name)
        shutil.copyfile(index, target)
        copied += 1

    from webwinnow.core.jit import made

    modules = {}
    for path in sorted(package.rglob("*.py")):
        if path.name == "__main__.py":
            continue  # runs the command line when imported
        parts = path.relative_to(package.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = importlib.import_module(name)
    made()  # every module's kernels as Numba's dispatchers (core.jit makes them on first use)
    kernels: dict[str, Dispatcher] = {}
    for name, module in modules.items():
        for obj in vars(module).values():
            if isinstance(obj, Dispatcher) and obj.py_func.__module__ == name and obj._cache.cache_path:
                kernels[f"{name}.{obj.py_func.__qualname__}"] = obj

    problems = []
    loaded = 0
    for qualname, kernel in sorted(kernels.items()):
        cache = kernel._cache._cache_file  # IndexDataCacheFile of this kernel
        keys = list(cache._load_index())
        if not keys:
            problems.append(f"{qualname}: no cached signature")
        for key in keys:
            kernel.compile(key[0])
            if kernel.stats.cache_misses.get(key[0]):
                problems.append(f"{qualname}{key[0]}: compiled, not loaded")
            else:
                loaded += 1

    from webwinnow.core import charfold

    charfold.fold_table()
    print(
        f"seed-kernels: {copied} kernel indexes copied ({stale} stale or foreign skipped); "
        f"{loaded} signatures of {len(kernels)} kernels loaded from disk",
        flush=True,
    )
    for p in problems:
        print(f"seed-kernels: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
