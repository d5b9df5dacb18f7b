"""A Spark standalone cluster on this machine runs the whole pipeline (`make cluster-demo`).

    python tests/cluster/demo.py [--crawl data/sample] [--workdir build/cluster-demo]

Starts one master and two workers on 127.0.0.1 with the installed pyspark's `spark-class`
(each worker with one core and its own work directory), submits `jobs/submit.py run` with plain
`spark-submit --master spark://127.0.0.1:PORT --archives dist/webwinnow-env.tar.gz#env` and no
--master after the script, and checks:

* the run's summary names that master, and the master's JSON status lists the application as
  finished, with executor folders for it on both workers;
* every Python worker process seen on the executors ran the packed environment's interpreter
  (`./env/bin/python` in the executor's folder) and mapped its Numba and pyarrow libraries from
  that unpacked environment, none from the repository's .venv;
* no executor compiled a kernel or built the normalization table: Numba's cache files and the
  table's under the executors' folders are all the archive's own (unpacked with the times they
  were packed at), none written during the run;
* every table equals the local-mode run's on the same input (sorted contents, schemas included).

The cluster is stopped whatever happens. Exit 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # spark-class and spark-submit of the installed pyspark
ARCHIVE = REPO / "dist" / "webwinnow-env.tar.gz"
CONF = REPO / "conf" / "webwinnow.toml"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def _spark_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env["PATH"] = f"{BIN}:{env.get('PATH', '/usr/bin:/bin')}"
    return env


class Cluster:
    """A standalone master and `workers` workers, each a process group of its own."""

    def __init__(self, workdir: Path, workers: int = 2, cores: int = 1, memory: str = "2g"):
        self.workdir, self.n, self.cores, self.memory = workdir, workers, cores, memory
        self.port, self.ui = _free_port(), _free_port()
        self.worker_dirs = [workdir / f"worker-{i}" for i in range(workers)]
        self.procs: list[subprocess.Popen] = []

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def status(self) -> dict:
        return _json(f"http://127.0.0.1:{self.ui}/json/")

    def _start(self, name: str, args: list[str]) -> None:
        log = open(self.workdir / f"{name}.log", "wb")  # noqa: SIM115 - the process owns it
        self.procs.append(
            subprocess.Popen(
                [str(BIN / "spark-class"), *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=_spark_env(),
                start_new_session=True,
                cwd=self.workdir,
            )
        )

    def _wait(self, what: str, ok, seconds: float = 90) -> None:
        deadline = time.time() + seconds
        while time.time() < deadline:
            if any(p.poll() is not None for p in self.procs):
                raise RuntimeError(f"a cluster process exited while waiting for {what}: see {self.workdir}/*.log")
            try:
                if ok():
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"timed out waiting for {what}: see {self.workdir}/*.log")

    def __enter__(self) -> Cluster:
        self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            self._start(
                "master",
                [
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--webui-port",
                    str(self.ui),
                ],
            )
            self._wait("the master", lambda: self.status().get("status") == "ALIVE")
            for i, folder in enumerate(self.worker_dirs):
                folder.mkdir(parents=True, exist_ok=True)
                self._start(
                    f"worker-{i}",
                    [
                        "org.apache.spark.deploy.worker.Worker",
                        self.url,
                        "--host",
                        "127.0.0.1",
                        "--cores",
                        str(self.cores),
                        "--memory",
                        self.memory,
                        "--work-dir",
                        str(folder),
                        "--webui-port",
                        str(_free_port()),
                    ],
                )
            self._wait(f"{self.n} workers", lambda: sum(w.get("state") == "ALIVE" for w in self.status()["workers"]) == self.n)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


class PythonWorkers:
    """Samples /proc while the application runs: Python processes working in an executor folder."""

    def __init__(self, roots: list[Path]):
        self.roots = [str(r.resolve()) for r in roots]
        self.seen: dict[int, dict] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> PythonWorkers:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._done.is_set():
            for entry in os.listdir("/proc"):
                if entry.isdigit() and int(entry) not in self.seen:
                    self._look(int(entry))
            self._done.wait(0.3)

    def _look(self, pid: int) -> None:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if b"pyspark.daemon" not in cmd and b"pyspark.worker" not in cmd:
                return
            cwd = os.readlink(f"/proc/{pid}/cwd")
            if not cwd.startswith(tuple(self.roots)):
                return
            libs = set()
            for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
                path = line.split(maxsplit=5)[-1] if line.count(" ") >= 5 else ""
                if "/site-packages/numba/" in path or "/site-packages/pyarrow/" in path:
                    libs.add(path)
        except (OSError, IndexError):
            return
        if libs:  # a forked worker that has imported the kernels (the daemon itself has not)
            self.seen[pid] = {"python": cmd[0].decode(), "cwd": cwd, "libs": sorted(libs)}


def _compare(a: Path, b: Path) -> list[str]:
    sys.path.insert(0, str(REPO / "bench"))
    import compare_outputs

    bad = []
    for name in compare_outputs.TABLES:
        if not (a / name).is_dir() or not (b / name).is_dir():
            bad.append(f"{name}: missing in {'local' if not (a / name).is_dir() else 'cluster'} output")
            continue
        x, y = compare_outputs.sorted_table(a / name), compare_outputs.sorted_table(b / name)
        if x.schema != y.schema or not x.equals(y):
            bad.append(f"{name}: differs ({x.num_rows:,} local rows, {y.num_rows:,} cluster rows)")
    return bad


def run_demo(
    crawl: Path, workdir: Path, archive: Path = ARCHIVE, local_out: Path | None = None, confs: tuple[Path, ...] = (CONF,)
) -> list[str]:
    """Everything above; returns the failed checks (empty: all passed). confs are both runs' config
    files: a local_out given must have been run with settings that make the same tables."""
    if not archive.is_file():
        return [f"{archive} is absent: run `make package` first"]
    if workdir.exists():
        shutil.rmtree(workdir)  # ours: only this demo writes there
    workdir.mkdir(parents=True)
    if local_out is None:
        local_out = workdir / "local"
        print("cluster-demo: local-mode run for comparison ...", flush=True)
        subprocess.run(
            [
                str(BIN / "webwinnow"),
                "run",
                str(crawl),
                "--out",
                str(local_out),
                *(arg for conf in confs for arg in ("--conf", str(conf))),
                "-q",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        )
    out = workdir / "cluster-out"
    failures: list[str] = []
    with Cluster(workdir) as cluster:
        print(f"cluster-demo: master {cluster.url} with {cluster.n} workers; submitting ...", flush=True)
        env = _spark_env()
        cmd = [
            str(BIN / "spark-submit"),
            "--master",
            cluster.url,
            "--archives",
            f"{archive}#env",
            "--conf",
            "spark.pyspark.python=./env/bin/python",
            "--conf",
            f"spark.pyspark.driver.python={sys.executable}",
            "--conf",
            "spark.executor.cores=1",
            "--conf",
            "spark.executor.memory=1g",
            "--conf",
            "spark.cores.max=2",
            "--conf",
            "spark.driver.host=127.0.0.1",
            str(REPO / "jobs" / "submit.py"),
            "run",
            str(crawl),
            "--out",
            str(out),
            *(arg for conf in confs for arg in ("--conf", str(conf))),
            "-q",
        ]
        started = time.time()
        with PythonWorkers(cluster.worker_dirs) as workers:
            done = subprocess.run(cmd, env=env, cwd=workdir, capture_output=True, text=True, timeout=1800)
        seconds = time.time() - started
        (workdir / "submit.log").write_text(done.stdout + done.stderr)
        if done.returncode != 0:
            return [f"spark-submit failed ({done.returncode}): see {workdir / 'submit.log'}\n" + done.stderr[-2000:]]
        summary = json.loads((out / "summary.json").read_text())
        app = summary["spark"]["app_id"]
        if summary["spark"]["master"] != cluster.url:
            failures.append(f"the run's master was {summary['spark']['master']}, not {cluster.url}")
        apps = {a["id"]: a for a in cluster.status().get("completedapps", []) + cluster.status().get("activeapps", [])}
        if app not in apps:
            failures.append(f"the master does not list application {app}")
        elif apps[app].get("state") != "FINISHED":
            failures.append(f"application {app} is {apps[app].get('state')} on the master, not FINISHED")
        executors = {
            str(d): sorted(p.name for p in (d / app).iterdir()) if (d / app).is_dir() else [] for d in cluster.worker_dirs
        }
        for folder, found in executors.items():
            if not found:
                failures.append(f"no executor of {app} ran on the worker with work dir {folder}")
        if not workers.seen:
            failures.append("no Python worker was seen on the executors")
        venv = str((REPO / ".venv").resolve())
        for pid, info in workers.seen.items():
            if info["python"] != "./env/bin/python":
                failures.append(f"executor Python {pid} ran {info['python']}, not ./env/bin/python")
            for lib in info["libs"]:
                if lib.startswith(venv) or not lib.startswith(info["cwd"] + "/env/"):
                    failures.append(f"executor Python {pid} mapped {lib}, outside its unpacked environment")
                    break
        for folder in cluster.worker_dirs:
            if not (folder / app).is_dir():
                continue
            built = sorted(
                p
                for pattern in ("*.nbi", "*.nbc", "charfold-*.npz")
                for p in (folder / app).rglob(pattern)
                if p.stat().st_mtime >= started
            )
            if built:
                failures.append(
                    f"executors on {folder.name} compiled what the archive should hold: "
                    + ", ".join(p.name for p in built[:5])
                    + (" ..." if len(built) > 5 else "")
                )
        workers_with_python = {
            d for d in executors if any(i["cwd"].startswith(str(Path(d).resolve())) for i in workers.seen.values())
        }
        if len(workers_with_python) < len(cluster.worker_dirs):
            failures.append(f"Python workers were seen on {len(workers_with_python)} of {len(cluster.worker_dirs)} workers")
        print(
            f"cluster-demo: application {app} ran in {seconds:.0f} s; executors: "
            + ", ".join(f"{Path(d).name}: {len(e)}" for d, e in executors.items())
            + f"; {len(workers.seen)} Python workers seen, all {sorted({i['python'] for i in workers.seen.values()})}",
            flush=True,
        )
    failures += _compare(local_out, out)
    return failures


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--crawl", type=Path, default=REPO / "data" / "sample")
    p.add_argument("--workdir", type=Path, default=REPO / "build" / "cluster-demo")
    args = p.parse_args(argv)
    failures = run_demo(args.crawl.resolve(), args.workdir.resolve())
    for f in failures:
        print(f"cluster-demo: FAILED: {f}", file=sys.stderr)
    if not failures:
        print("cluster-demo: every check passed: the cluster's tables equal local mode's", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
