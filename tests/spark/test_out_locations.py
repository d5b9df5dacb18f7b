"""--out given as a URI is written the object-store way (webwinnow.outputs.generations): generations and a
commit record written last. Shown here with file:// on a second local filesystem (tmpfs), the
one store Spark can write without a connector: the tables equal a plain run's; a failed run
commits nothing and leaves the current run as it was; --resume continues it; a stage run alone
points at the tables it did not rewrite; what no commit names is deleted, and nothing else.
A plain path on that filesystem keeps the local way (a staging folder beside OUT, swapped in)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import uuid
from pathlib import Path

import pytest

from webwinnow import storage
from webwinnow.app.cli import main
from webwinnow.outputs.generations import CURRENT, read_current

from paths import CONF, QUICK, REPO

pytestmark = pytest.mark.spark

sys.path.insert(0, str(REPO / "bench"))
import compare_outputs  # noqa: E402


@pytest.fixture()
def other_filesystem(tmp_path):
    """A folder on a filesystem other than tmp_path's (tmpfs at /dev/shm), removed afterwards."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev or not os.access(shm, os.W_OK):
        pytest.skip("no writable /dev/shm on a filesystem of its own")
    folder = shm / f"webwinnow-test-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _assert_tables_equal(record: dict, reference: Path) -> None:
    for name in compare_outputs.TABLES:
        a = compare_outputs.sorted_table(reference / name)
        b = compare_outputs.sorted_table(Path(storage.canonical(record["tables"][name])))
        assert a.schema == b.schema and a.equals(b), name


@pytest.mark.own_spark
def test_a_uri_out_commits_generations(sample_dir, sample_run, other_filesystem, tmp_path, capsys):
    out = other_filesystem / "nested" / "out"
    uri = f"file://{out}"
    argv = ["run", str(sample_dir), "--out", uri, "--conf", str(CONF), "--conf", str(QUICK), "-q"]
    assert main(argv) == 0
    first = read_current(uri)
    assert sorted(p.name for p in out.iterdir()) == [".webwinnow-output", CURRENT, "runs"]
    assert set(first["tables"]) == set(compare_outputs.TABLES) | {"report"}
    _assert_tables_equal(first, sample_run)
    gen1 = out / "runs" / first["generation"]
    assert (gen1 / "report" / "index.html").is_file() and (gen1 / "run.log").stat().st_size > 0
    assert json.loads((gen1 / "summary.json").read_text())["generation"] == f"{uri}/runs/{first['generation']}"

    # a failed run commits nothing: readers still see the first run, byte for byte
    props = tmp_path / "fail.properties"
    props.write_text((CONF.parent / "spark-local.properties").read_text() + "\nspark.webwinnow.injectTaskFailure=passages\n")
    failing = tmp_path / "fail.toml"
    failing.write_text(f'[spark]\nproperties = "{props}"\n')
    before = _tree(out / "runs" / first["generation"])
    record_bytes = (out / CURRENT).read_bytes()
    with pytest.raises(Exception, match="injected failure"):
        main(argv + ["--conf", str(failing), "--master", "local[2]"])
    assert (out / CURRENT).read_bytes() == record_bytes
    assert _tree(gen1) == before
    unfinished = [g for g in (out / "runs").iterdir() if g.name != first["generation"]]
    assert len(unfinished) == 1 and (unfinished[0] / "candidate_pairs" / "_webwinnow.json").is_file()
    assert not (unfinished[0] / "passages" / "_webwinnow.json").exists()

    # --resume continues that generation, commits it, and the first run is collected
    capsys.readouterr()
    assert main([a for a in argv if a != "-q"] + ["--resume"]) == 0
    err = capsys.readouterr().err
    assert "candidates: kept from the interrupted run" in err and "passages: kept" not in err
    second = read_current(uri)
    assert second["generation"] == unfinished[0].name
    assert sorted(p.name for p in (out / "runs").iterdir()) == [second["generation"]]
    _assert_tables_equal(second, sample_run)

    # a stage alone: its table in a new generation, the others pointed at where they are
    assert main(["clusters", "--out", uri, "--conf", str(CONF), "-q"]) == 0
    third = read_current(uri)
    gen2, gen3 = f"{uri}/runs/{second['generation']}", f"{uri}/runs/{third['generation']}"
    assert third["tables"]["clusters"] == f"{gen3}/clusters"
    assert third["tables"]["documents"] == f"{gen2}/documents" and third["tables"]["report"] == f"{gen2}/report"
    assert not (out / "runs" / second["generation"] / "clusters").exists()  # collected: no commit names it
    _assert_tables_equal(third, sample_run)
    summary = json.loads(Path(storage.canonical(third["summary"])).read_text())
    assert summary["ran"] == ["clusters"] and summary["extract"]["parsed"] == 311


def test_a_uri_out_never_takes_objects_it_did_not_write(sample_dir, other_filesystem, capsys):
    out = other_filesystem / "theirs"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    for extra in ([], ["--force"]):
        assert main(["run", str(sample_dir), "--out", f"file://{out}", "--conf", str(CONF)] + extra) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "holds objects webwinnow did not write (notes.txt)" in err[0], err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert main(["candidates", "--out", f"file://{other_filesystem}/absent", "--conf", str(CONF)]) == 2
    assert "does not exist: run 'webwinnow run" in capsys.readouterr().err


def test_a_plain_path_on_another_filesystem_is_swapped_in(sample_dir, sample_run, other_filesystem):
    out = other_filesystem / "plain"
    assert main(["extract", str(sample_dir), "--out", str(out), "--conf", str(CONF), "-q"]) == 0
    assert sorted(p.name for p in other_filesystem.iterdir()) == ["plain"]  # no staging, no lock left
    for name in ("documents", "ledger"):
        assert compare_outputs.sorted_table(out / name).equals(compare_outputs.sorted_table(sample_run / name))
