"""A gzipped crawl file read in pieces (framing.Piece): when the pieces join (pieces_join), they
give exactly the records of one reading in order, damaged files included; intact files always
join. Checked on the sample's files, the real crawl files and the damaged ones, cut at random."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webwinnow.crawl.framing import Piece, iter_file, pieces_join

from paths import MALFORMED, REAL, need

LIMITS = {"max_body": 32 << 20, "max_member": 4096 << 20}


def _key(rec) -> tuple:
    return (rec.offset, rec.inner, rec.error, rec.url, rec.record_id, rec.warc_type, len(rec.body), rec.flags)


def _whole(path: Path) -> list[tuple]:
    return [_key(r) for r in iter_file(str(path), **LIMITS)]


def _in_pieces(path: Path, cuts: list[int]) -> tuple[list[tuple], bool]:
    size = path.stat().st_size
    bounds = [0, *sorted(set(c for c in cuts if 0 < c < size)), size]
    pieces = [Piece(a, b) for a, b in zip(bounds, bounds[1:])]
    records = [_key(r) for p in pieces for r in iter_file(str(path), **LIMITS, piece=p)]
    return records, pieces_join(pieces, size)


@pytest.fixture(scope="module")
def gz_files(sample_dir) -> list[Path]:
    files = sorted(sample_dir.glob("*.warc.gz"))
    files += sorted(need(REAL).glob("*.warc.gz")) + sorted(need(MALFORMED).glob("*.gz"))
    return [f for f in files if f.stat().st_size > 0]


@pytest.fixture(scope="module")
def wholes(gz_files) -> dict[Path, list[tuple]]:
    return {f: _whole(f) for f in gz_files}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_pieces_that_join_read_what_one_reading_does(gz_files, wholes, data):
    path = data.draw(st.sampled_from(gz_files))
    size = path.stat().st_size
    cuts = data.draw(st.lists(st.integers(1, max(1, size - 1)), max_size=6))
    records, joined = _in_pieces(path, cuts)
    if joined:
        assert records == wholes[path], path.name


def test_intact_files_cut_anywhere_always_join(sample_dir, wholes):
    for path in sorted(sample_dir.glob("*.warc.gz")):
        size = path.stat().st_size
        for n in (2, 3, 7, 40):
            records, joined = _in_pieces(path, [size * i // n for i in range(1, n)])
            assert joined, (path.name, n)
            assert records == wholes[path]


def test_a_piece_that_begins_inside_a_member_finds_the_next_record():
    """A piece starting mid-member reads from the next member holding a record header; a piece
    past the last member reads nothing and joins the one before it."""
    path = sorted(need(REAL).glob("*.warc.gz"))[0]
    size = path.stat().st_size
    offsets = sorted({r.offset for r in iter_file(str(path), **LIMITS)})
    assert len(offsets) > 2
    piece = Piece(offsets[1] + 1, size)
    first = [r.offset for r in iter_file(str(path), **LIMITS, piece=piece)]
    assert piece.first == offsets[2] and first[0] == offsets[2]
    tail = Piece(size - 1, size)
    assert list(iter_file(str(path), **LIMITS, piece=tail)) == [] and tail.first is None
    head = Piece(0, size - 1)
    list(iter_file(str(path), **LIMITS, piece=head))
    assert pieces_join([head, tail], size)
