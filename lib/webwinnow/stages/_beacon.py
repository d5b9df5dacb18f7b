"""How far a task is in its files, sent to the driver while it reads them.

Accumulators reach the driver only when a task ends, so a run over one large WARC file showed
"0 B read" until it was done. Here each task sends, at most twice a second, the bytes it has read
of its files (completed files whole, the current one up to the offset of its latest record) and
the records it has seen, as one UDP datagram to a socket of the driver's. It is display only and
best effort: a datagram lost or a port a cluster's firewall closes costs a progress line, never a
result (the ledger is the record, and the accumulators still count what finished). Datagrams
carry a random token, so another sender's are ignored.
"""

from __future__ import annotations

import secrets
import socket
import threading
import time
from typing import Any, NamedTuple

#: Seconds between two datagrams of one task.
EVERY = 0.5


class Beacon:
    """The driver's end: a UDP socket on every interface, and the latest counts of every task."""

    #: Seconds the listener waits in one receive before it looks whether it was closed.
    WAIT: float | None = 0.5

    def __init__(self, host: str) -> None:
        self.token = secrets.token_hex(8)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind(("", 0))
        self._sock.settimeout(self.WAIT)
        self.address = (host, self._sock.getsockname()[1], self.token)
        self._latest: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="webwinnow-beacon", daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        while not self._closed.is_set():
            try:
                data = self._sock.recv(512)
            except (TimeoutError, OSError):
                continue
            parts = data.decode("ascii", "replace").split()
            if len(parts) != 4 or parts[0] != self.token:
                continue
            try:
                counts = (int(parts[2]), int(parts[3]))
            except ValueError:
                continue
            with self._lock:
                self._latest[parts[1]] = counts  # a retried task starts again from 0: the latest wins

    def totals(self) -> tuple[int, int]:
        """(bytes, records) read so far over all tasks, by their latest datagrams."""
        with self._lock:
            return sum(b for b, _ in self._latest.values()), sum(r for _, r in self._latest.values())

    def close(self) -> None:
        self._closed.set()
        # wake the listener from its receive now, not at its timeout: every command waited for it
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as wake:
                wake.sendto(b"", ("127.0.0.1", self.address[1]))
        except OSError:
            pass
        self._thread.join(timeout=2)
        self._sock.close()


class Sender:
    """A task's end: counts sent to the driver's Beacon, at most every EVERY seconds."""

    def __init__(self, address: tuple[str, int, str] | None, task: str) -> None:
        self._to = address
        self._task = task
        self._last = 0.0
        self._sock: socket.socket | None = None
        if address is not None:
            try:
                self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            except OSError:
                self._sock = None

    def send(self, read: int, records: int, force: bool = False) -> None:
        if self._sock is None or self._to is None:
            return
        now = time.monotonic()
        if not force and now - self._last < EVERY:
            return
        self._last = now
        host, port, token = self._to
        try:
            self._sock.sendto(f"{token} {self._task} {read} {records}".encode("ascii"), (host, port))
        except OSError:  # unreachable from here: no progress lines, nothing else
            self._sock.close()
            self._sock = None


class ReadCounters(NamedTuple):
    """What a stage that reads the crawl reports its reading to: accumulators (bytes, records of
    the files its tasks finished) and the driver's Beacon address (None: no datagrams)."""

    bytes: Any
    records: Any
    address: tuple[str, int, str] | None
