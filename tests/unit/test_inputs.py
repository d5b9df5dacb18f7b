"""Input listing and task grouping."""

from __future__ import annotations

import gzip
import os

import pytest

from webwinnow.crawl.inputs import InputFile, group_inputs, list_inputs
from webwinnow.errors import UserError

from paths import REPO


@pytest.fixture()
def crawl(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "deep").mkdir()
    for name, size in [
        ("a/1.warc.gz", 10),
        ("a/deep/2.arc", 20),
        ("a/3.warc", 30),
        ("a/notes.txt", 5),
        ("b.arc.gz", 40),
        ("c.wet.gz", 1),
    ]:
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
        fh.write(f"# a comment\na/1.warc.gz\n\n{crawl / 'b.arc.gz'}\nfile://{crawl / 'a' / '3.warc'}\n")
    files = list_inputs([str(manifest)])
    assert [os.path.relpath(f.path, crawl) for f in files] == ["a/1.warc.gz", "a/3.warc", "b.arc.gz"]


def test_missing_inputs_are_refused_before_any_work(crawl):
    with pytest.raises(UserError, match=r"1 input path does not exist: .*nope\.warc\.gz"):
        list_inputs([str(crawl / "b.arc.gz"), str(crawl / "nope.warc.gz")])
    manifest = crawl / "inputs.txt"
    manifest.write_text("a/1.warc.gz\nmissing-1.warc.gz\nmissing-2.warc.gz\n")
    with pytest.raises(UserError, match=r"2 input paths do not exist: .*missing-1\.warc\.gz \(listed in .*inputs\.txt\)"):
        list_inputs([str(manifest)])


@pytest.mark.parametrize("text", ["a/1.warc.gz\nnot a path\n", "", "a/1.warc.gz.bak\n"])
def test_a_text_file_is_a_manifest_only_when_every_line_names_a_crawl_file(crawl, text):
    notes = crawl / "notes.txt"
    notes.write_text(text)
    with pytest.raises(UserError, match=r"notes\.txt is none of what an INPUT may be: crawl files .* or a manifest"):
        list_inputs([str(notes)])


def test_a_text_file_that_names_no_crawl_file_is_one_item(crawl):
    notes = crawl / "question.txt"
    notes.write_text("just some text\nto check against an index\n")
    assert [f.path for f in list_inputs([str(notes)])] == [str(notes)]
    other = crawl / "notes.doc"
    other.write_text("just some notes\n")
    with pytest.raises(UserError, match=r"notes\.doc is none of what an INPUT may be"):
        list_inputs([str(other)])


def test_unknown_stores_and_odd_inputs_are_refused(crawl):
    manifest = crawl / "remote.paths"
    manifest.write_text("gopher://archive.example/crawl-data/x.warc.gz\n")
    with pytest.raises(
        UserError,
        match=r"^input gopher://archive.example/: gopher:// is not a store webwinnow "
        r"reads .*: download the files, or name them on one of those$",
    ):
        list_inputs([str(manifest)])
    (crawl / "page.html").write_text("<html></html>")
    with pytest.raises(UserError, match="none of what an INPUT may be"):
        list_inputs([str(crawl / "page.html")])
    (crawl / "empty").mkdir()
    with pytest.raises(
        UserError, match=r"the folder holds none of the crawl files \(.warc, .arc, .wat, .wet, each also .gz\) or item files"
    ):
        list_inputs([str(crawl / "empty")])


def test_wat_files_alone_are_refused_wet_files_are_inputs(crawl):
    (crawl / "x.wat.gz").write_bytes(b"x")
    with pytest.raises(UserError, match="every input is a WAT file"):
        list_inputs([str(crawl / "x.wat.gz")])
    assert [os.path.basename(f.path) for f in list_inputs([str(crawl / "c.wet.gz"), str(crawl / "x.wat.gz")])] == [
        "c.wet.gz",
        "x.wat.gz",
    ]


def test_groups_hold_whole_files_in_order():
    files = [InputFile(f"/f{i}", s) for i, s in enumerate([50, 50, 200, 10, 10, -1, 10])]
    groups = group_inputs(files, target_bytes=100)
    assert [[f.path for f in g] for g in groups] == [["/f0", "/f1"], ["/f2"], ["/f3", "/f4", "/f5", "/f6"]]
    assert [f for g in groups for f in g] == files
    assert len(group_inputs(files, target_bytes=10**9, max_files=3)) == 3


def _crawl_files(folder, names):
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        (folder / n).write_bytes(b"WARC/1.0\r\n")
    return folder


def test_manifest_prefix_limit_and_sample(tmp_path):
    import gzip

    from webwinnow.crawl.inputs import UserError, list_inputs, sampled

    names = [f"CC-MAIN-{i:05d}.warc.gz" for i in range(200)]
    mirror = _crawl_files(tmp_path / "mirror" / "crawl-data" / "warc", names)
    manifest = tmp_path / "lists" / "warc.paths.gz"
    manifest.parent.mkdir()
    with gzip.open(manifest, "wt") as fh:
        fh.write("".join(f"crawl-data/warc/{n}\n" for n in names))
    with pytest.raises(UserError, match="do not exist"):
        list_inputs([str(manifest)])  # relative to the manifest's folder: not there
    everything = list_inputs([str(manifest)], prefix=str(tmp_path / "mirror"))
    assert [f.path for f in everything] == [str(mirror / n) for n in names]
    assert [f.path for f in list_inputs([str(manifest)], prefix=str(tmp_path / "mirror"), limit=3)] == [
        str(mirror / n) for n in names[:3]
    ]
    half = list_inputs([str(manifest)], prefix=str(tmp_path / "mirror"), sample=0.5)
    assert 60 < len(half) < 140  # 200 files, fraction 0.5
    assert [f.path for f in half] == [str(mirror / n) for n in names if sampled(n, 0.5)]
    # the same files from another mirror and another listing: chosen by file name alone
    other = _crawl_files(tmp_path / "other", names)
    assert [os.path.basename(f.path) for f in list_inputs([str(other)], sample=0.5)] == [os.path.basename(f.path) for f in half]
    # only the kept files must exist: a partial mirror is fine for a small slice
    partial = _crawl_files(tmp_path / "partial" / "crawl-data" / "warc", names[:3])
    assert len(list_inputs([str(manifest)], prefix=str(tmp_path / "partial"), limit=3)) == 3 and partial.exists()
    for bad, message in (
        ({"limit": 0}, "--limit"),
        ({"sample": 0.0}, "--sample"),
        ({"sample": 1.5}, "--sample"),
        ({"prefix": str(tmp_path / "absent")}, "--prefix"),
        ({"prefix": "gopher://host/"}, "not a store"),
    ):
        with pytest.raises(UserError, match=message):
            list_inputs([str(manifest)], **bad)
    with pytest.raises(UserError, match="keeps none"):
        list_inputs([str(mirror / names[0])], sample=1e-12)


def test_locations_are_canonical_whatever_their_spelling(tmp_path):
    from webwinnow import storage

    assert storage.canonical(f"file://{tmp_path}/a.warc") == f"{tmp_path}/a.warc"
    assert storage.canonical(f"file://localhost{tmp_path}/a.warc") == f"{tmp_path}/a.warc"
    assert (
        storage.canonical("s3a://bucket/x/a.warc.gz")
        == storage.canonical("s3n://bucket/x/a.warc.gz")
        == "s3://bucket/x/a.warc.gz"
    )
    assert storage.canonical("GS://b/k") == "gs://b/k"
    assert storage.join("s3://commoncrawl/", "crawl-data/a.warc.gz") == "s3://commoncrawl/crawl-data/a.warc.gz"
    assert storage.join("s3://b/lists", "s3a://c/a.warc") == "s3://c/a.warc"
    assert storage.join(str(tmp_path), "a/b.warc") == f"{tmp_path}/a/b.warc"
    assert storage.parent("s3://b/x/y/a.warc") == "s3://b/x/y" and storage.basename("s3://b/x/a.warc") == "a.warc"


def test_globs_match_within_a_segment_and_double_stars_across(crawl):
    (crawl / "a" / ".hidden.warc").write_bytes(b"x")
    names = lambda pattern: [os.path.relpath(f.path, crawl) for f in list_inputs([str(crawl / pattern)])]  # noqa: E731
    assert names("a/*.warc*") == ["a/1.warc.gz", "a/3.warc"]  # not a/deep/2.arc, not the dot file
    assert names("a/**/*.arc") == ["a/deep/2.arc"]
    assert names("**/*.arc*") == ["a/deep/2.arc", "b.arc.gz"]
    assert names("a/.h*") == ["a/.hidden.warc"]
    assert names("?.arc.gz") == ["b.arc.gz"]


def test_one_list_of_what_an_input_may_be_in_the_help_the_errors_and_the_readme(tmp_path):
    from webwinnow.crawl.inputs import ACCEPTED, CRAWL_SUFFIXES, ITEM_SUFFIXES

    for command in ("run", "check", "index", "extract"):
        assert " ".join(ACCEPTED.split()) in " ".join(_subcommand_help(command).split()), command
    assert ACCEPTED in (REPO / "README.md").read_text()
    for suffix in (*CRAWL_SUFFIXES, *ITEM_SUFFIXES):  # every suffix the reader takes is named
        assert suffix.removesuffix(".gz") in ACCEPTED, suffix
    (tmp_path / "notes.doc").write_text("not an input")
    with pytest.raises(UserError) as refused:
        list_inputs([str(tmp_path)])
    assert "crawl files (.warc, .arc, .wat, .wet, each also .gz) or item files (.jsonl" in str(refused.value)


def _subcommand_help(name: str) -> str:
    from webwinnow.app.options import _parser

    return _parser()._subparsers._group_actions[0].choices[name].format_help()  # type: ignore[union-attr]
