"""Build what a cluster needs: the wheel and a packed virtualenv (`make package`).

    python tests/cluster/package.py

Writes dist/webwinnow-VERSION-py3-none-any.whl and dist/webwinnow-env.tar.gz, for

    spark-submit --archives dist/webwinnow-env.tar.gz#env --conf spark.pyspark.python=./env/bin/python ...

A fresh virtualenv (build/package-env) gets the wheel and its dependencies from the package index
(through this venv's pip: the packed one holds none).
It then runs the pipeline once on a small sample crawl, so that Numba's compiled kernels and the
normalization table are cached inside it, for exactly the signatures the stages use: executors
unpack the archive into their work directory and load the kernels instead of compiling them
(each executor would otherwise pay the compile once). venv-pack packs it without pyspark's jars:
executors' JVMs bring their own Spark, and Python workers need only pyspark's Python code.

    python tests/cluster/package.py --kernels-from-repo

copies the kernels from the checkout's own cache (lib/webwinnow/**/__pycache__, seed_kernels.py)
instead of that warm-up run, a JVM start and a pipeline: minutes on two cores. Only right after a
pipeline run of these very sources has filled it (the cluster test, after the session's sample
run) does that cache hold the stages' signatures. When it lacks a kernel, or a signature does not
load from it, the warm-up run follows as without the option.

venv-pack does not carry the interpreter: executors need the same Python at the same path as
this machine's (as on this machine's standalone cluster, or nodes built from one image); a
cluster of other machines wants conda-pack or a PEX instead (README, "Running on a cluster").
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "build"
DIST = REPO / "dist"
ENV = BUILD / "package-env"
ARCHIVE = DIST / "webwinnow-env.tar.gz"


def _run(cmd: list, **kw) -> None:
    print("package:", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--kernels-from-repo",
        action="store_true",
        help="copy the compiled kernels from lib/webwinnow/**/__pycache__ (filled by a pipeline run of "
        "these sources) instead of a warm-up run; the warm-up still runs when any is missing",
    )
    args = p.parse_args(argv)
    started = time.time()
    # pip must see only the new venv: a PYTHONPATH naming this checkout's lib/ (and its egg-info)
    # makes it take webwinnow as installed already and skip the wheel
    pip_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    DIST.mkdir(exist_ok=True)
    for old in DIST.glob("webwinnow-*.whl"):
        old.unlink()  # ours: this script wrote it
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", DIST, REPO], env=pip_env)
    wheel = next(DIST.glob("webwinnow-*.whl"))
    if ENV.exists():
        shutil.rmtree(ENV)
    base = getattr(sys, "_base_executable", sys.executable)  # the interpreter under this venv
    # no pip inside: executors never install anything, and this venv's own (current) pip installs
    # into it through --python, without the seconds of ensurepip and an upgrade of the pip it brings
    _run([base, "-m", "venv", "--without-pip", ENV])
    _run([sys.executable, "-m", "pip", "--python", ENV / "bin" / "python", "install", "-q", wheel], env=pip_env)

    warm = BUILD / "package-warmup"
    if warm.exists():
        shutil.rmtree(warm)
    env = {
        "PATH": f"{ENV / 'bin'}:/usr/bin:/bin",
        "HOME": str(Path.home()),
        "PYSPARK_PYTHON": str(ENV / "bin" / "python"),
        "PYSPARK_DRIVER_PYTHON": str(ENV / "bin" / "python"),
    }
    # the installed console script works (the warm-up run would show it too)
    _run([ENV / "bin" / "webwinnow", "sample", warm / "crawl", "--pages", "60"], env=env, stdout=subprocess.DEVNULL)
    seeded = False
    if args.kernels_from_repo:
        print("package: kernels from", REPO / "lib" / "webwinnow", flush=True)
        seeded = (
            subprocess.run(
                [str(ENV / "bin" / "python"), str(Path(__file__).with_name("seed_kernels.py")), str(REPO / "lib" / "webwinnow")],
                env=env,
            ).returncode
            == 0
        )
        if not seeded:
            print("package: the checkout's kernel cache is incomplete: warming up with a pipeline run", flush=True)
    if not seeded:
        _run(
            [ENV / "bin" / "webwinnow", "run", warm / "crawl", "--out", warm / "out", "-q"],
            env=env,
            stdout=subprocess.DEVNULL,
            cwd=warm,
        )

    _run(
        [
            Path(sys.executable).parent / "venv-pack",
            "-p",
            ENV,
            "-o",
            ARCHIVE,
            "--force",
            "-q",
            "--exclude",
            "lib/python*/site-packages/pyspark/jars/*",
            "--exclude",
            "lib/python*/site-packages/pyspark/examples/*",
            # packages' own test suites and C headers: never imported by a worker
            "--exclude",
            "lib/python*/site-packages/*/tests/*",
            "--exclude",
            "lib/python*/site-packages/pyarrow/include/*",
        ]
    )
    print(
        f"package: {wheel.relative_to(REPO)}, {ARCHIVE.relative_to(REPO)} ({ARCHIVE.stat().st_size / 2**20:.0f} MiB) "
        f"in {time.time() - started:.0f} s",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
