"""A local run's Python daemon, started by the driver beside the JVM rather than by the JVM after it.

Spark's JVM starts its Python daemon (stages._daemon) when the first Python task comes, and the
daemon imports what its workers need and loads the kernels (1.3-1.6 CPU-s) before it forks
them: on the docs corpus the run's first 1.3 s of extract went on that alone, on one core, the
other idle (docs/performance.md). Started by the driver as it launches the JVM, the same work
overlaps the JVM's own start.

The driver starts `python -m webwinnow.stages._daemon --prestart SOCKET` (start); that process
imports and loads all of it, then waits on a Unix socket. When the JVM starts its daemon, the
process it starts (hand_over) connects there and passes its standard streams (the pipes the JVM
reads the daemon's port from, writes the workers to kill to, and logs from), its environment,
import path and folder. The prestarted process takes them as its own and runs pyspark's daemon
(serve); the JVM's process stands in for it, forwarding SIGTERM (Spark's way of stopping its
daemon) and ending when it ends. Whatever does not match -- another interpreter, pyspark or
package than the one loaded, an environment variable read as the interpreter or its imports
start (IMPORT_TIME) -- is refused, and the JVM's process loads everything itself, as before.
"""

from __future__ import annotations

import importlib.util
import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable

#: Where the JVM's daemon finds the prestarted one (an environment variable of the executors).
SOCKET_ENV = "WEBWINNOW_DAEMON_SOCKET"
#: What Spark sets for its Python daemon that the interpreter or an import reads as it starts
#: (the rest of the JVM's environment is read later, and is taken over as it is).
SPARK_SETS = {"PYTHONHASHSEED": "0", "PYTHONUNBUFFERED": "YES", "OMP_NUM_THREADS": "1"}
#: Variables that must be the same in both processes: read by the interpreter as it starts, or
#: by NumPy, Arrow, Numba or pyspark as they are imported. Prefixes end with "_" or are whole names.
IMPORT_TIME = (
    "PYTHONHASHSEED",
    "PYTHONUNBUFFERED",
    "PYTHONOPTIMIZE",
    "PYTHONMALLOC",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONPYCACHEPREFIX",
    "PYTHONUTF8",
    "PYTHONIOENCODING",
    "PYTHONWARNINGS",
    "PYTHONSAFEPATH",
    "NUMBA_",
    "OMP_",
    "OPENBLAS_",
    "MKL_",
    "ARROW_",
    "PYARROW_",
    "LD_",
    "MALLOC_",
    "LC_",
    "LANG",
    "TZ",
    "SPARK_TESTING",
    "PYSPARK_ENABLE_NAMEDTUPLE_PATCH",
)
#: The packages the prestarted process imported: the JVM's daemon must find the same files.
PACKAGES = ("pyspark", "py4j", "numpy", "pyarrow", "numba", "webwinnow")
#: What the report's figures task imports besides what every task does (matplotlib: 0.45 CPU-s),
#: loaded by the prestarted daemon of a command that draws them: the figures task is the report's
#: longest, and the JVM's start leaves a core half idle.
FIGURE_MODULES = (
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
    "PIL.PngImagePlugin",
    "webwinnow.explore.figures",
    "webwinnow.htmlreport.plot",
)
#: How long the JVM's daemon waits for the prestarted one to finish loading before loading itself.
HANDOVER_SECONDS = 120.0


def _import_time(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if any(k == p or (p.endswith("_") and k.startswith(p)) for p in IMPORT_TIME)}


class Prestarted:
    """The driver's handle on the prestarted daemon: its socket, whether the JVM's daemon took
    it over, and stop()."""

    def __init__(self, proc: subprocess.Popen, folder: str) -> None:
        self.proc, self.folder = proc, folder
        self.socket_path = os.path.join(folder, "daemon.sock")
        self._said = b""

    def handed_over(self) -> bool:
        """Whether the JVM's daemon handed its streams over (the prestarted process says so on its
        standard output, to the driver, before it takes the JVM's streams)."""
        out = self.proc.stdout
        if out is not None and not out.closed and not self._said.endswith(b"\n"):
            while select.select([out], [], [], 0)[0]:
                got = os.read(out.fileno(), 64)
                if not got:
                    break
                self._said += got
        return self._said.startswith(b"handed over")

    def stop(self, wait: float = 5.0) -> None:
        """End it: one not handed over sees its standard input close and leaves; one that serves
        the JVM ends as the JVM stops its daemon (Spark stops first)."""
        self.handed_over()
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(wait)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def start(env: dict[str, str] | None = None, also: tuple[str, ...] = ()) -> Prestarted | None:
    """Start the daemon beside the JVM (None where a Unix socket cannot be made). `env`: the
    driver's environment, to which what Spark sets for its daemon is added (SPARK_SETS, with the
    hash seed pyspark passes on); `also`: modules it imports besides the workers' (FIGURE_MODULES)."""
    if not sys.platform.startswith("linux"):  # a process's end is awaited with Linux's pidfd
        return None
    environ = dict(os.environ if env is None else env)
    environ.update(SPARK_SETS)
    environ["PYTHONHASHSEED"] = (env or os.environ).get("PYTHONHASHSEED", "0")
    environ.pop(SOCKET_ENV, None)
    try:
        folder = tempfile.mkdtemp(prefix="webwinnow-daemon-")
    except OSError:
        return None
    # listening before the process starts: the JVM's daemon may come before it is loaded (it then
    # waits), never before anything listens (it would load everything itself)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(os.path.join(folder, "daemon.sock"))  # OSError: a path too long for a socket
        listener.listen(1)
        proc = subprocess.Popen(
            [sys.executable, "-m", "webwinnow.stages._daemon", "--prestart", str(listener.fileno()), *also],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=environ,
            pass_fds=(listener.fileno(),),
            process_group=0,  # Ctrl-C at the terminal is the driver's to handle, not this process's
        )
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return None
    finally:
        listener.close()
    return Prestarted(proc, folder)


def _origins() -> dict[str, str | None]:
    found = {}
    for name in PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        found[name] = spec.origin if spec is not None else None
    return found


def _refusal(offer: dict, started: dict[str, str]) -> str:
    """Why this process cannot be the offered daemon ("" when it can)."""
    if offer.get("executable") != sys.executable or offer.get("version") != sys.version:
        return "another interpreter"
    origins = offer.get("origins") or {}
    if any(origins.get(name) != sys.modules[name].__file__ for name in PACKAGES if name in sys.modules):
        return "other packages"
    if _import_time(offer.get("env", {})) != _import_time(started):
        mine, theirs = _import_time(started), _import_time(offer.get("env", {}))
        return "environment: " + ", ".join(sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k)))
    return ""


#: How far the threads that load ahead while the JVM starts step back (stages._prestart's, the
#: driver's import_ahead and kernel check): nice values, per thread.
BEHIND_JVM = 10


def behind_jvm() -> None:
    """Lower the calling thread's scheduling priority by BEHIND_JVM, for loading done ahead of
    need while the JVM starts: the JVM's start (spark-submit's launcher, then SparkContext) is
    what the first job waits for, and these threads shared the two cores with it on equal terms
    (the first job began 0.26 s later on the docs corpus, eight alternating runs). Linux only,
    where a priority is a thread's own (elsewhere PRIO_PROCESS would name the whole process, or
    another one); threads started from this one inherit it, as do processes. Never undone (an
    unprivileged process cannot raise a priority again): call it in a thread of its own."""
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + BEHIND_JVM))
    except (OSError, AttributeError):  # not permitted, or no such call: the same work at the same priority
        pass


def serve(listening: int, prepare: Callable[[], None], kernels: Callable[[], bool], run: Callable[[], None]) -> None:
    """The prestarted process: prepare() (imports, memory settings), load the kernels (kernels():
    whether Numba's cache held them), wait on the socket the driver made (file descriptor
    `listening`) for the JVM's daemon, take its streams and run() as Spark's daemon; leave when
    the driver closes this process's input first. (stages._daemon gives the three.)"""
    import gc

    started = dict(os.environ)
    listener = socket.socket(fileno=listening)
    loaded = _behind_jvm(prepare, kernels)
    gc.freeze()  # what both loaded, without a collection first (stages._daemon.paused_collection)
    if sys.stdin.fileno() in select.select([listener, sys.stdin.fileno()], [], [])[0]:
        os._exit(0)  # the driver stopped Spark, or is gone, before any Python task
    conn, _ = listener.accept()
    os.unlink(listener.getsockname())  # a daemon the JVM starts again loads itself
    listener.close()
    if not loaded and kernels():  # a first run: the driver's warm-up compiled them since
        gc.freeze()
    conn.settimeout(30)
    try:
        offer, fds = _received(conn)
    except (OSError, ValueError):  # the JVM's daemon went away, or sent what is not an offer
        offer, fds = None, []
    reason = _refusal(offer, started) if offer is not None and len(fds) == 3 else "an incomplete offer"
    if reason or offer is None:
        try:
            conn.sendall(f"no {reason}\n".encode())
        except OSError:
            pass
        os._exit(0)
    os.write(1, b"handed over\n")  # to the driver, before the JVM's stream takes this place
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(offer["cwd"])
    os.environ.clear()
    os.environ.update(offer["env"])
    sys.path[:] = offer["path"]
    sys.argv[:] = offer["argv"]  # pyspark's daemon runs the worker module the JVM names there
    conn.sendall(f"ok {os.getpid()}\n".encode())
    conn.close()
    run()


def _behind_jvm(prepare: Callable[[], None], kernels: Callable[[], bool]) -> bool:
    """prepare() then kernels(), in a thread behind the JVM's start (behind_jvm), its result
    or what it raised. Not in this one: the workers are forked from it, at its priority."""
    done: list = []

    def body() -> None:
        behind_jvm()
        try:
            prepare()
            done.append(kernels())
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            done.append(exc)

    thread = threading.Thread(target=body, name="webwinnow-prestart-load")
    thread.start()
    thread.join()
    if isinstance(done[0], BaseException):
        raise done[0]
    return bool(done[0])


def _received(conn: socket.socket) -> tuple[dict | None, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    if len(data) < 4:
        return None, fds
    size = struct.unpack("!I", data[:4])[0]
    body = data[4:]
    while len(body) < size:
        more = conn.recv(size - len(body))
        if not more:
            return None, fds
        body += more
    return json.loads(body), fds


def hand_over(path: str) -> bool:
    """The process the JVM started as its daemon: give its streams to the prestarted daemon at
    `path` and stand in for it until it ends (True), or False where it is refused or absent
    (this process then serves as before)."""
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(HANDOVER_SECONDS)
        conn.connect(path)
        offer = json.dumps(
            {
                "env": dict(os.environ),
                "path": sys.path,
                "cwd": os.getcwd(),
                "argv": sys.argv,
                "origins": _origins(),
                "executable": sys.executable,
                "version": sys.version,
            }
        ).encode()
        socket.send_fds(conn, [struct.pack("!I", len(offer)) + offer], [0, 1, 2])
        reply = b""
        while not reply.endswith(b"\n"):
            got = conn.recv(256)
            if not got:
                break
            reply += got
        conn.close()
    except OSError:
        return False
    if not reply.startswith(b"ok "):
        return False
    pid = int(reply.split()[1])
    # the JVM's pipes are the daemon's now: they close when it ends, not when this process does
    null = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        os.dup2(null, target)
    os.close(null)

    def forward(signum, frame) -> None:  # Spark stops its daemon with SIGTERM, and waits for neither
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
        os._exit(0)

    signal.signal(signal.SIGTERM, forward)
    _wait_for(pid)
    return True


def _wait_for(pid: int) -> None:
    """Until process `pid` (not this one's child) has ended."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = -1
    if fd >= 0:
        try:
            while True:
                try:
                    select.select([fd], [], [])
                    return
                except InterruptedError:
                    continue
        finally:
            os.close(fd)
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        except PermissionError:
            pass
        select.select([], [], [], 0.25)
