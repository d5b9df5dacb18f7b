"""--out safety and fail-fast checks: refusals happen before any Spark work and leave every
user file byte-identical; the lock keeps two runs out of one folder. No JVM is started here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from webwinnow.app.cli import main
from webwinnow.errors import UserError
from webwinnow.outputs.swap import MARKER, RunLock, check_replaceable, is_webwinnow_output
from webwinnow.stages import TABLES

from paths import CONF, REAL, need


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture()
def crawl_file() -> Path:
    return need(REAL) / "jwarc__cc.warc.gz"


@pytest.fixture()
def no_spark(monkeypatch):
    """Fail the test if a command tries to start Spark."""
    import webwinnow.stages._session

    def refuse(*args, **kwargs):
        raise AssertionError("Spark was started: the refusal came too late")

    monkeypatch.setattr(webwinnow.stages._session, "build_session", refuse)


def _refused(argv: list[str], capsys, *needles: str) -> str:
    assert main([*argv, "--conf", str(CONF)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("webwinnow: error: "), err  # one line, no traceback
    for needle in needles:
        assert needle in err, err
    return err


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith((out.name + ".", "." + out.name + ".")))


def test_out_holding_the_input_is_never_replaced(tmp_path, crawl_file, capsys, no_spark):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / crawl_file.name).write_bytes(crawl_file.read_bytes())
    (victim / "notes.txt").write_text("notes\n")
    before = _tree(victim)
    for extra in ([], ["--force"]):
        _refused(["run", str(victim), "--out", str(victim), *extra], capsys, "holds an input of this run")
        assert _tree(victim) == before
    assert _leftovers(victim) == []


def test_out_dot_in_the_working_directory(tmp_path, crawl_file, capsys, monkeypatch, no_spark):
    work = tmp_path / "mywork"
    work.mkdir()
    (work / "x.warc.gz").write_bytes(crawl_file.read_bytes())
    (work / "thesis.tex").write_text("months of work\n")
    before = _tree(work)
    monkeypatch.chdir(work)
    _refused(["run", "x.warc.gz", "--out", "."], capsys, "holds an input of this run")
    # no input inside, --force: still never the working directory or a parent of it
    _refused(["run", str(crawl_file), "--out", ".", "--force"], capsys, "the working directory")
    _refused(["run", str(crawl_file), "--out", "..", "--force"], capsys, "the working directory")
    assert _tree(work) == before


def test_out_naming_a_file_or_a_symlink(tmp_path, crawl_file, capsys, no_spark):
    target = tmp_path / "results.csv"
    target.write_text("a,b\n1,2\n")
    for extra in ([], ["--force"]):
        _refused(["run", str(crawl_file), "--out", str(target), *extra], capsys, "is not a folder", "never replaces a file")
    assert target.read_text() == "a,b\n1,2\n"
    link = tmp_path / "link"
    (tmp_path / "real").mkdir()
    link.symlink_to(tmp_path / "real")
    _refused(["run", str(crawl_file), "--out", str(link), "--force"], capsys, "is not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real", "results.csv"]


def test_a_folder_webwinnow_did_not_make_is_refused_without_force(tmp_path, crawl_file, capsys, no_spark):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me\n")
    (mine / "pairs").mkdir()
    (mine / "pairs" / "part-0.parquet").write_bytes(b"PAR1 not really")
    before = _tree(mine)
    _refused(["run", str(crawl_file), "--out", str(mine)], capsys, "is not a webwinnow output folder", "--force")
    assert _tree(mine) == before
    # a webwinnow output that gained a user file is refused too, naming the file
    (mine / MARKER).write_text(json.dumps({"made_by": "webwinnow"}))
    _refused(["run", str(crawl_file), "--out", str(mine)], capsys, "also holds files webwinnow did not make", "notes.txt")
    # with --force the check passes (the run itself is tested with Spark elsewhere)
    check_replaceable(mine, tables=TABLES, protected=[crawl_file], force=True)


def test_empty_and_own_folders_are_replaceable(tmp_path, crawl_file):
    empty = tmp_path / "empty"
    empty.mkdir()
    check_replaceable(empty, tables=TABLES, protected=[crawl_file], force=False)
    ours = tmp_path / "ours"
    (ours / "pairs").mkdir(parents=True)
    (ours / "pairs" / "_webwinnow.json").write_text("{}")
    (ours / "summary.json").write_text("{}")  # an output from before the marker file
    assert is_webwinnow_output(ours)
    check_replaceable(ours, tables=TABLES, protected=[crawl_file], force=False)
    (ours / ".pairs.incomplete").mkdir()  # a stage's staging folder is webwinnow's own
    check_replaceable(ours, tables=TABLES, protected=[crawl_file], force=False)


def test_something_in_the_way_of_the_incomplete_folder(tmp_path, crawl_file, capsys, no_spark):
    out = tmp_path / "out"
    (tmp_path / "out.incomplete").mkdir()
    (tmp_path / "out.incomplete" / "draft.txt").write_text("mine\n")
    _refused(["run", str(crawl_file), "--out", str(out)], capsys, "out.incomplete is in the way")
    assert (tmp_path / "out.incomplete" / "draft.txt").read_text() == "mine\n"


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["run", "{missing}", "--out", "{out}"], "1 input path does not exist"),
        (["run", "{crawl}", "--out", "{out}", "--exclude", "{missing}"], "--exclude"),
        (
            ["run", "{crawl}", "--out", "{out}", "--k", str(10**20)],
            "k (the noise threshold) must be an integer >= 1 and <= 2147483647",
        ),
        (["run", "{crawl}", "--out", "{out}", "--w", str(2**40)], "w (the window) must be an integer >= 1 and <= 2147483647"),
        (["run", "{crawl}", "--out", "{out}", "--mod-p", str(2**70)], "winnow.mod_p must be an integer"),
        (["run", "{crawl}", "--out", "{out}", "--max-df", str(2**70)], "pairing.max_df must be an integer"),
        (["run", "{doc}", "--out", "{out}"], "is none of what an INPUT may be"),
        (["run", "{crawl}", "--out", "{notes}/sub/out"], "notes.txt is a file, not a folder"),
        (["run", "{crawl}", "--out", "/proc/webwinnow-out"], "cannot write in /proc"),
        (["candidates", "--out", "{tmp}"], "fingerprints is missing or incomplete: run 'webwinnow fingerprint"),
        (["report", "--out", "{tmp}/nothing-here"], "does not exist"),
        (["run", "{crawl}", "--out", "{out}", "--strip-template"], "--strip-template: options of the dedup stage; add --dedup"),
        (["run", "{crawl}", "--out", "{out}", "--dedup", "--min-passage", "-3"], "dedup.min_passage must be an integer >= 0"),
    ],
)
def test_fails_fast_with_one_line(tmp_path, crawl_file, capsys, no_spark, argv, needle):
    (tmp_path / "notes.txt").write_text("shopping list\neggs\n")
    (tmp_path / "notes.doc").write_text("shopping list\neggs\n")
    values = {
        "doc": str(tmp_path / "notes.doc"),
        "missing": str(tmp_path / "gone.warc.gz"),
        "out": str(tmp_path / "out"),
        "crawl": str(crawl_file),
        "notes": str(tmp_path / "notes.txt"),
        "tmp": str(tmp_path),
    }
    before = _tree(tmp_path)
    _refused([a.format(**values) for a in argv], capsys, needle)
    assert _tree(tmp_path) == before  # nothing created: no OUT, no OUT.incomplete, no lock


def test_a_run_in_progress_locks_its_out(tmp_path, crawl_file, capsys, no_spark):
    out = tmp_path / "out"
    with RunLock(out, "webwinnow run"):
        record = json.loads((tmp_path / "out.lock").read_text())
        assert record["pid"] == os.getpid() and record["host"]
        _refused(["run", str(crawl_file), "--out", str(out)], capsys, "is in use by another webwinnow run", f"pid {os.getpid()}")
    assert not (tmp_path / "out.lock").exists()


def test_a_stale_lock_is_taken_over(tmp_path):
    out = tmp_path / "out"
    # a run killed with -9 leaves its lock file; nobody holds the flock any more
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (tmp_path / "out.lock").write_text(json.dumps({"pid": int(dead.stdout), "host": "h", "command": "webwinnow run"}))
    lock = RunLock(out, "webwinnow run").acquire()
    try:
        assert lock.stale_owner["pid"] == int(dead.stdout)
        assert json.loads((tmp_path / "out.lock").read_text())["pid"] == os.getpid()
    finally:
        lock.release()
    assert not (tmp_path / "out.lock").exists()


def test_a_lock_file_webwinnow_did_not_write_is_left_alone(tmp_path):
    (tmp_path / "out.lock").write_text("my own notes about locks\n")
    with pytest.raises(UserError, match="is not a webwinnow lock file"):
        RunLock(tmp_path / "out", "webwinnow run").acquire()
    assert (tmp_path / "out.lock").read_text() == "my own notes about locks\n"


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("webwinnow 0.")


def _output(folder: Path, tag: str) -> Path:
    (folder / "pairs").mkdir(parents=True)
    (folder / "pairs" / "_webwinnow.json").write_text(json.dumps({"tag": tag}))
    (folder / MARKER).write_text(json.dumps({"made_by": "webwinnow"}))
    return folder


def test_a_swap_cut_between_its_renames_is_finished_or_undone(tmp_path):
    from webwinnow.outputs.swap import recover_interrupted_swap

    final = tmp_path / "out"
    # killed after OUT went to .OUT.old, before OUT.incomplete (finished) took its place
    _output(tmp_path / ".out.old", "old")
    _output(tmp_path / "out.incomplete", "new")
    (tmp_path / "out.incomplete" / "summary.json").write_text("{}")
    assert "finished the interrupted swap" in recover_interrupted_swap(final)
    assert json.loads((final / "pairs" / "_webwinnow.json").read_text())["tag"] == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert recover_interrupted_swap(final) is None  # nothing to do any more
    # an unfinished run (no summary.json) never replaces the old output: the old one comes back
    final.rename(tmp_path / ".out.old")
    _output(tmp_path / "out.incomplete", "half")
    assert "restored" in recover_interrupted_swap(final)
    assert json.loads((final / "pairs" / "_webwinnow.json").read_text())["tag"] == "new"
    assert (tmp_path / "out.incomplete" / "pairs").is_dir()  # kept for --resume


def test_a_full_disk_keeps_only_what_the_user_reads(tmp_path):
    from webwinnow.outputs.swap import prune_for_space

    staging = _output(tmp_path / "out.incomplete", "x")
    (staging / "ledger").mkdir()
    (staging / "run.log").write_text("log\n")
    assert prune_for_space(staging) == "ledger, run.log"
    assert sorted(p.name for p in staging.iterdir()) == [MARKER, "ledger", "run.log"]
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "pairs").mkdir()
    assert prune_for_space(foreign) == "" and (foreign / "pairs").is_dir()


def test_environment_failures_are_told_apart_from_bugs():
    import errno

    from webwinnow.errors import environment_failure

    full = environment_failure(OSError(errno.ENOSPC, "No space left on device", "/d/out.incomplete/run.log"), "/d/out")
    assert full.kind == "disk_full" and "/d/out.incomplete/run.log" in full.message and full.exit_code == 4
    java = RuntimeError(
        "An error occurred while calling o123.parquet.\n: org.apache.spark.SparkException: Job aborted"
        "\nCaused by: java.io.IOException: No space left on device\n\tat java.io.FileOutputStream"
    )
    assert environment_failure(java, "/d/out").kind == "disk_full"
    corrupt = RuntimeError(
        "[FAILED_READ_FILE.NO_HINT] Error while reading file file:/d/out/pairs/part-00000-x.zstd.parquet."
        " Caused by: java.lang.RuntimeException: file:/d/out/pairs/part-00000-x.zstd.parquet is not a"
        " Parquet file. Expected magic number at tail"
    )
    failure = environment_failure(corrupt, "/d/out")
    assert failure.kind == "corrupt_table" and "/d/out/pairs/part-00000-x.zstd.parquet is corrupt" in failure.message
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as exc:
            raise RuntimeError("while writing") from exc
    except RuntimeError as chained:
        assert environment_failure(chained, "/d/out").kind == "disk_full"
    assert environment_failure(ValueError("a bug"), "/d/out") is None
    assert environment_failure(KeyError("pairs"), "/d/out") is None


def _interrupt_then_cleanup_fails(*args, **kwargs):
    try:
        raise KeyboardInterrupt
    finally:  # what a finally block's call into the interrupted JVM does
        raise RuntimeError("Py4JError: An error occurred while calling o123.unpersist")


def _error_then_interrupt(*args, **kwargs):
    raise RuntimeError("Py4JJavaError: Job aborted: Python worker exited unexpectedly")


@pytest.mark.parametrize("stages, slow_signal", [(_interrupt_then_cleanup_fails, False), (_error_then_interrupt, True)])
def test_an_interrupt_is_an_interrupt_whatever_error_surfaces(tmp_path, crawl_file, capsys, monkeypatch, stages, slow_signal):
    import webwinnow.app.cli

    def signal_lands_now(*args):  # the driver's SIGINT handler runs while the job's failure is handled
        raise KeyboardInterrupt

    monkeypatch.setattr(webwinnow.app.cli, "run_stages", stages)
    if slow_signal:
        monkeypatch.setattr(webwinnow.app.cli, "environment_failure", signal_lands_now)
    out = tmp_path / "out"
    assert main(["run", str(crawl_file), "--out", str(out), "--conf", str(CONF)]) == 130
    err = capsys.readouterr().err
    assert err == f"webwinnow: interrupted; {out} unchanged; rerun with --resume to continue\n"
    assert not out.exists()
