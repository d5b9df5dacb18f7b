"""What a run prints, and its record: every line goes to the terminal (unless --quiet) and to OUT/run.log.

When webwinnow is the process (the ``webwinnow`` command, ``python -m webwinnow``), the
process's own stdout and stderr are redirected into the log before Spark starts, so the JVM,
Spark's warnings and the Python workers (which inherit those descriptors) write there too;
the terminal sees only webwinnow's lines, and with --verbose everything. Called as a library
(``cli.main`` inside another program or a test) the descriptors are left alone and run.log
holds webwinnow's lines.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import IO, TextIO

from ..text.visible import visible

PREFIX = "webwinnow: "


class Console:
    def __init__(self, quiet: bool = False, verbose: bool = False) -> None:
        self.quiet = quiet
        self.verbose = verbose
        self._log: IO[bytes] | None = None
        self._out: TextIO | None = None  # the terminal, once the descriptors are captured
        self._err: TextIO | None = None
        self._saved: tuple[int, int] | None = None
        self._lock = threading.Lock()
        self._bar = False  # a progress bar is drawn on the current terminal line
        self._publish = None
        self._log_path: str | None = None

    # -- where lines go -------------------------------------------------------------------------
    @property
    def out(self) -> TextIO:
        return self._out or sys.stdout

    @property
    def err(self) -> TextIO:
        return self._err or sys.stderr

    @property
    def tty(self) -> bool:
        try:
            return self.err.isatty()
        except (AttributeError, ValueError):
            return False

    def open_log(self, path: str, append: bool = False, temporary: bool = False) -> None:
        """Log to a file. temporary: a scratch file on the driver's disk, deleted at close unless
        publish_log() named where it goes (a command on a store uploads its log at the end)."""
        self._log = open(path, "ab" if append else "wb")
        self._log_path = path if temporary else None
        if append and self._log.tell():
            self._log.write(b"\n")
        self.log(f"--- {time.strftime('%Y-%m-%d %H:%M:%S %Z')}: webwinnow {' '.join(sys.argv[1:])}")

    def publish_log(self, publish) -> None:
        """publish(bytes) receives the whole log at close."""
        self._publish = publish

    def log(self, line: str) -> None:
        if self._log is not None:
            with self._lock:
                try:
                    self._log.write((line.rstrip("\n") + "\n").encode("utf-8", "replace"))
                    self._log.flush()
                except OSError:  # a full disk: the terminal still gets the line
                    pass

    def _write(self, stream: TextIO, text: str) -> None:
        text = "\n".join(visible(line) for line in text.split("\n"))  # a path or URL never reverses the terminal
        with self._lock:
            if self._bar:
                stream.write("\r\033[K")
                self._bar = False
            stream.write(text + "\n")
            stream.flush()

    def say(self, message: str) -> None:
        """A line of the run's story (stage started, notes): shown unless --quiet."""
        line = PREFIX + message
        self.log(line)
        if not self.quiet:
            self._write(self.err, line)

    def result(self, lines: list[str]) -> None:
        """The summary: stdout; --quiet keeps its warnings (what makes the run's results wrong or
        meaningless) and its last line (where the output is)."""
        text = [PREFIX + line for line in lines]
        for line in text:
            self.log(line)
        if self.quiet:
            text = [line for line in text[:-1] if line.startswith(PREFIX + "warning:")] + text[-1:]
        self._write(self.out, "\n".join(text))

    def error(self, message: str) -> None:
        line = PREFIX + message
        self.log(line)
        self._write(self.err, line)

    def bar(self, text: str) -> None:
        """Redraw the progress bar line (terminals only)."""
        with self._lock:
            self.err.write("\r\033[K" + visible(text)[: _columns() - 1])
            self.err.flush()
            self._bar = True

    def clear_bar(self) -> None:
        with self._lock:
            if self._bar:
                self.err.write("\r\033[K")
                self.err.flush()
                self._bar = False

    # -- capturing the process's output ---------------------------------------------------------
    def capture(self) -> None:
        """Send fd 1 and 2 (and so the JVM's and the workers' output) into the log; keep the
        terminal for webwinnow's own lines. Call once, before Spark starts."""
        if self._saved is not None or self._log is None:
            return
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        self._out = os.fdopen(os.dup(saved[0]), "w", buffering=1, encoding="utf-8", errors="replace")
        self._err = os.fdopen(os.dup(saved[1]), "w", buffering=1, encoding="utf-8", errors="replace")
        read_end, write_end = os.pipe()
        os.dup2(write_end, 1)
        os.dup2(write_end, 2)
        os.close(write_end)
        self._saved = saved
        threading.Thread(target=self._drain, args=(read_end,), name="webwinnow-log", daemon=True).start()

    def _drain(self, fd: int) -> None:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            if self._log is not None:
                with self._lock:
                    try:
                        self._log.write(chunk)
                        self._log.flush()
                    except (OSError, ValueError):
                        pass
            if self.verbose and self._err is not None:
                with self._lock:
                    self._err.write(chunk.decode("utf-8", "replace"))
                    self._err.flush()

    def close(self) -> None:
        """Give the terminal back its descriptors. With the process's output captured, the log
        stays open for the JVM's late lines (it ends with the process); otherwise it is closed."""
        if self._saved is None and self._log is not None:
            with self._lock:
                self._log.close()
                self._log = None
        path, publish = self._log_path, self._publish
        self._log_path = self._publish = None
        if path is None:
            return
        try:
            if publish is not None:
                with open(path, "rb") as fh:
                    publish(fh.read())
            os.unlink(path)
        except Exception as exc:  # noqa: BLE001 - the run's outcome stands; say where the log is
            self.error(f"could not upload run.log ({exc}); it is in {path}")
        if self._saved is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(self._saved[0], 1)
            os.dup2(self._saved[1], 2)
            os.close(self._saved[0])
            os.close(self._saved[1])
            self._saved = None


def _columns() -> int:
    try:
        return os.get_terminal_size(2).columns
    except OSError:
        return 100
