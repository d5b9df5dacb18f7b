"""Progress from inside a task (webwinnow.stages._beacon): what a task sends while it reads one
file reaches the driver's beacon before the file is done; other senders' datagrams do not count."""

from __future__ import annotations

import socket
import time

from webwinnow.stages._beacon import Beacon, ReadCounters, Sender
from webwinnow.stages.extract import _Reading


def _wait(beacon: Beacon, want: tuple[int, int]) -> tuple[int, int]:
    deadline = time.time() + 5
    while beacon.totals() != want and time.time() < deadline:
        time.sleep(0.02)
    return beacon.totals()


def test_tasks_counts_reach_the_driver_and_the_latest_of_each_task_wins():
    beacon = Beacon("127.0.0.1")
    try:
        Sender(beacon.address, "0").send(1000, 10, force=True)
        Sender(beacon.address, "1").send(500, 3, force=True)
        assert _wait(beacon, (1500, 13)) == (1500, 13)
        Sender(beacon.address, "0").send(200, 2, force=True)  # task 0 retried: it starts again
        assert _wait(beacon, (700, 5)) == (700, 5)
        # a datagram without the token, or malformed, is ignored
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"0000 2 99999 99", ("127.0.0.1", beacon.address[1]))
            s.sendto(f"{beacon.token} 3 lots 1".encode(), ("127.0.0.1", beacon.address[1]))
        time.sleep(0.3)
        assert beacon.totals() == (700, 5)
    finally:
        beacon.close()


def test_closing_wakes_the_listener_however_long_it_would_wait(monkeypatch):
    """Every command closes its beacon as it ends: the listener is woken, not waited for."""
    monkeypatch.setattr(Beacon, "WAIT", None)  # a receive that never times out
    beacon = Beacon("127.0.0.1")
    beacon.close()
    assert not beacon._thread.is_alive()


def test_a_sender_sends_at_most_twice_a_second_unless_a_file_ends():
    beacon = Beacon("127.0.0.1")
    try:
        sender = Sender(beacon.address, "0")
        sender.send(1, 1)
        sender.send(2, 2)  # too soon: dropped
        assert _wait(beacon, (1, 1)) == (1, 1)
        sender.send(3, 3, force=True)
        assert _wait(beacon, (3, 3)) == (3, 3)
    finally:
        beacon.close()


class _Acc:
    def __init__(self) -> None:
        self.value = 0

    def add(self, n: int) -> None:
        self.value += n


class _Recorder(Sender):
    def __init__(self) -> None:
        super().__init__(None, "0")
        self.sent: list[tuple[int, int]] = []

    def send(self, read: int, records: int, force: bool = False) -> None:
        self.sent.append((read, records))


def test_bytes_grow_inside_a_file_from_its_records_offsets_and_the_accumulators_count_at_its_end():
    counters = ReadCounters(_Acc(), _Acc(), None)
    sender = _Recorder()
    reading = _Reading(counters, sender)
    first = [{"kind": "record", "offset": o} for o in (0, 4000, 9000)] + [{"kind": "file", "records_seen": 3}]
    assert list(reading.rows(iter(first), 10_000, offsets=True)) == first
    assert sender.sent == [(0, 1), (4000, 2), (9000, 3), (10_000, 3)]
    assert (counters.bytes.value, counters.records.value) == (10_000, 3)
    # an item file's offsets are lines, not bytes: its bytes count when it ends
    items = [{"kind": "record", "offset": 1}, {"kind": "file", "records_seen": 1}]
    list(reading.rows(iter(items), 50, offsets=False))
    assert sender.sent[-2:] == [(10_000, 4), (10_050, 4)]
