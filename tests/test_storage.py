"""Input listing and task grouping."""

from __future__ import annotations

import gzip
import os

import pytest

from webwinnow.storage import InputFile, group_inputs, list_inputs


@pytest.fixture()
def crawl(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "deep").mkdir()
    for name, size in [("a/1.warc.gz", 10), ("a/deep/2.arc", 20), ("a/3.warc", 30), ("a/notes.txt", 5), ("b.arc.gz", 40), ("c.wet.gz", 1)]:
        (tmp_path / name).write_bytes(b"x" * size)
    return tmp_path


def test_directories_are_searched_recursively_for_crawl_files(crawl):
    files = list_inputs([str(crawl / "a")])
    assert [os.path.relpath(f.path, crawl) for f in files] == ["a/1.warc.gz", "a/3.warc", "a/deep/2.arc"]
    assert [f.size for f in files] == [10, 30, 20]


def test_globs_dedup_and_sorting(crawl):
    files = list_inputs([str(crawl / "*.arc.gz"), str(crawl / "a" / "*.warc*"), str(crawl / "b.arc.gz")])
    assert [os.path.basename(f.path) for f in files] == ["1.warc.gz", "3.warc", "b.arc.gz"]


def test_manifest_relative_and_absolute_lines_gzipped(crawl):
    manifest = crawl / "warc.paths.gz"
    with gzip.open(manifest, "wt") as fh:
        fh.write(f"# a comment\na/1.warc.gz\n\n{crawl / 'b.arc.gz'}\nmissing.warc.gz\n")
    files = list_inputs([str(manifest)])
    assert [os.path.relpath(f.path, crawl) for f in files] == ["a/1.warc.gz", "b.arc.gz", "missing.warc.gz"]
    # a path that does not exist is kept, so the extract stage records it as a failed file
    assert files[-1].size == -1


def test_a_glob_naming_nothing_is_an_error(crawl):
    with pytest.raises(ValueError, match="names no .warc"):
        list_inputs([str(crawl / "*.warc.bz2")])
    with pytest.raises(ValueError, match="no input given"):
        list_inputs([])


def test_groups_hold_whole_files_in_order():
    files = [InputFile(f"/f{i}", s) for i, s in enumerate([50, 50, 200, 10, 10, -1, 10])]
    groups = group_inputs(files, target_bytes=100)
    assert [[f.path for f in g] for g in groups] == [["/f0", "/f1"], ["/f2"], ["/f3", "/f4", "/f5", "/f6"]]
    assert [f for g in groups for f in g] == files
    assert len(group_inputs(files, target_bytes=10**9, max_files=3)) == 3
