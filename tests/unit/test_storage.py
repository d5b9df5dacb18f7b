"""Local paths are looked at without pyarrow (webwinnow.storage): the same answers as pyarrow's
LocalFileSystem gives, which is what URIs still go through."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow.fs as pafs
import pytest

from webwinnow import storage


def _pyarrow_info(name: str) -> storage.Entry | None:
    fi = pafs.LocalFileSystem().get_file_info(storage.canonical(name))
    if fi.type == pafs.FileType.NotFound:
        return None
    return storage.Entry(
        storage.canonical(name), fi.size if fi.size is not None else -1, fi.mtime_ns, fi.type == pafs.FileType.Directory
    )


def _pyarrow_walk(name: str, recursive: bool) -> list[storage.Entry]:
    found = pafs.LocalFileSystem().get_file_info(pafs.FileSelector(storage.canonical(name), recursive=recursive))
    return sorted(
        (
            storage.Entry(fi.path, fi.size if fi.size is not None else -1, fi.mtime_ns, fi.type == pafs.FileType.Directory)
            for fi in found
        ),
        key=lambda e: e.name,
    )


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "sub" / "page.warc.gz").write_bytes(b"x" * 17)
    (tmp_path / "file.warc").write_bytes(b"warc")
    (tmp_path / "empty.warc").write_bytes(b"")
    (tmp_path / "link.warc").symlink_to(tmp_path / "file.warc")
    (tmp_path / "linked").symlink_to(tmp_path / "d")
    (tmp_path / "broken").symlink_to(tmp_path / "nowhere")
    os.mkfifo(tmp_path / "fifo")
    return tmp_path


def test_info_answers_as_pyarrow_does(tree):
    names = ["file.warc", "empty.warc", "link.warc", "linked", "broken", "fifo", "d", "d/sub", "nothing", "file.warc/inside"]
    for name in names:
        path = str(tree / name)
        assert storage.info(path) == _pyarrow_info(path), name
    assert storage.info(str(tree) + "/") == _pyarrow_info(str(tree))
    assert storage.info("file://" + str(tree / "file.warc")) == _pyarrow_info(str(tree / "file.warc"))
    # what each answer is, so that both agreeing on something else would still fail
    assert storage.info(str(tree / "file.warc")).size == 4
    assert storage.info(str(tree / "d")).is_dir and storage.info(str(tree / "d")).size == -1
    assert storage.info(str(tree / "fifo")).size == -1 and not storage.info(str(tree / "fifo")).is_dir
    assert storage.info(str(tree / "broken")) is None


@pytest.mark.parametrize("recursive", [True, False])
def test_walk_answers_as_pyarrow_does(tree, recursive):
    got = storage.walk(str(tree), recursive=recursive)
    assert got == _pyarrow_walk(str(tree), recursive)
    names = {os.path.relpath(e.name, tree) for e in got}
    assert "broken" not in names and "fifo" in names
    assert ("linked/sub/page.warc.gz" in names) is recursive


def test_a_folder_that_is_not_there_cannot_be_walked(tmp_path):
    with pytest.raises(storage.StorageError, match="nothing: "):
        storage.walk(str(tmp_path / "nothing"))


def test_a_link_to_a_folder_above_is_walked_as_pyarrow_walks_it(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "page.warc").write_bytes(b"w")
    (tmp_path / "a" / "up").symlink_to(tmp_path / "a")
    assert storage.walk(str(tmp_path)) == _pyarrow_walk(str(tmp_path), True)


def test_listing_local_inputs_imports_no_pyarrow(tree):
    """The command lists its inputs before it starts the JVM: that costs no pyarrow or NumPy import."""
    code = (
        "import sys; from webwinnow.crawl.inputs import list_inputs; from webwinnow.app.options import parse; "
        f"parse(['run', {str(tree)!r}, '--out', 'o']); list_inputs([{str(tree)!r}]); "
        "print(sorted(m for m in ('pyarrow', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
