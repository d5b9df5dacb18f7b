"""Execute every notebook here, top to bottom, on one run's output (`make notebooks`).

    python notebooks/execute.py [--out out/sample] [--into build/notebooks] [NAME.ipynb ...]

Each notebook runs in a fresh kernel with WEBWINNOW_OUT set to --out; the executed copies (with
their outputs) go to --into, the notebooks themselves stay as committed. The notebooks also
write their figures into the run's report/figures/. Exit 0 when every notebook ran, 1 (with the
failing cell's error) otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def execute(notebook: Path, out: Path, into: Path, timeout: int = 600):
    """Run one notebook; returns the executed notebook (raises nbclient's CellExecutionError)."""
    import nbclient
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    saved = {k: os.environ.get(k) for k in ("WEBWINNOW_OUT", "MPLBACKEND")}
    os.environ["WEBWINNOW_OUT"] = str(out)
    os.environ["MPLBACKEND"] = "Agg"
    try:
        nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": str(HERE)}}).execute()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    into.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, into / notebook.name)
    return nb


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=REPO / "out" / "sample", help="the run's output folder")
    p.add_argument("--into", type=Path, default=REPO / "build" / "notebooks", help="where the executed copies go")
    p.add_argument("names", nargs="*", help="notebooks to run (default: all)")
    args = p.parse_args(argv)
    if not (args.out / "summary.json").is_file():
        print(f"notebooks: {args.out} is not a finished webwinnow run: run 'make run' first (or give --out)", file=sys.stderr)
        return 1
    import nbclient

    names = args.names or sorted(p.name for p in HERE.glob("*.ipynb"))
    failed = 0
    for name in names:
        started = time.time()
        try:
            execute(HERE / name, args.out.resolve(), args.into.resolve())
        except nbclient.exceptions.CellExecutionError as exc:
            failed += 1
            print(f"notebooks: {name} FAILED:\n{exc}", file=sys.stderr)
            continue
        print(f"notebooks: {name} ran in {time.time() - started:.0f} s -> {args.into / name}", flush=True)
    figures = args.out / "report" / "figures"
    if figures.is_dir():
        print(f"notebooks: figures in {figures}: {', '.join(sorted(p.name for p in figures.glob('*.png')))}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
