"""Running, in Spark: an interrupted or failed run resumes to the tables of an uninterrupted
one; Ctrl-C prints one line and leaves OUT as it was; progress shows in a pipe; run.log
records Spark's output; a stage run alone says which tables it left stale."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from webwinnow.app.cli import main

from paths import CONF, QUICK, REPO

pytestmark = pytest.mark.spark

KEYS = {
    "documents": ["doc_id"],
    "ledger": ["file", "offset", "kind", "reason"],
    "fingerprints": ["doc_id", "pos", "hash"],
    "doc_stats": ["doc_id"],
    "hash_freq": ["hash"],
    "rank_freq": ["rank"],
    "candidate_pairs": ["doc_a", "doc_b"],
    "pairs": ["doc_a", "doc_b"],
    "template_pairs": ["doc_a", "doc_b"],
    "template_kgrams": ["hash"],
    "pair_seeds": ["doc_a", "doc_b"],
    "passages": ["doc_a", "doc_b", "start_a", "start_b"],
    "clusters": ["doc_id"],
}


def _same_tables(a: Path, b: Path) -> None:
    for table, key in KEYS.items():
        x = pq.read_table(a / table).to_pandas().sort_values(key).reset_index(drop=True)
        y = pq.read_table(b / table).to_pandas().sort_values(key).reset_index(drop=True)
        assert x.astype(str).equals(y.astype(str)), table
    assert (a / "report" / "stats.json").read_text() == (b / "report" / "stats.json").read_text()


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.own_spark
def test_a_failed_run_resumes_to_the_uninterrupted_tables(tmp_path, sample_dir, sample_run, capsys):
    props = tmp_path / "fail.properties"
    props.write_text((CONF.parent / "spark-local.properties").read_text() + "\nspark.webwinnow.injectTaskFailure=passages\n")
    failing = tmp_path / "fail.toml"
    failing.write_text(f'[spark]\nproperties = "{props}"\n')
    out = tmp_path / "new" / "nested" / "out"  # missing parents are made, as mkdir -p would
    argv = ["run", str(sample_dir), "--out", str(out), "--conf", str(CONF), "--conf", str(QUICK)]
    # local[2] never retries a task: the injected failure fails the passages stage for good
    with pytest.raises(Exception, match="injected failure"):
        main(argv + ["--conf", str(failing), "--master", "local[2]"])
    staged = out.parent / "out.incomplete"
    assert not out.exists() and not (out.parent / "out.lock").exists()
    assert {p.name for p in staged.iterdir() if (p / "_webwinnow.json").exists()} == {
        "documents",
        "ledger",
        "fingerprints",
        "doc_stats",
        "hash_freq",
        "rank_freq",
        "candidate_pairs",
        "pair_seeds",
        "template_kgrams",  # the passages stage's first table, written before the failure: rewritten on resume
    }
    capsys.readouterr()
    assert main(argv + ["--resume"]) == 0
    err = capsys.readouterr().err
    for name in ("extract", "fingerprint", "hash_freq", "candidates"):
        assert f"{name}: kept from the interrupted run" in err
    assert "passages: kept" not in err
    assert not staged.exists()
    _same_tables(sample_run, out)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["resumed"] == ["extract", "fingerprint", "hash_freq", "candidates"]
    assert summary["extract"] == json.loads((sample_run / "summary.json").read_text())["extract"]
    # a resume with other settings keeps only what they do not change
    capsys.readouterr()
    shutil.copytree(out, staged)  # as if the last run had stopped after its last stage
    (staged / "summary.json").unlink()
    assert main(argv + ["--resume", "--min-shared", "2"]) == 0
    err = capsys.readouterr().err
    assert "hash_freq: kept" in err and "candidates: kept" not in err and "candidates ..." in err


def _start(argv: list[str], env: dict) -> tuple[subprocess.Popen, list[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "webwinnow", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    lines: list[str] = []

    def read():
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))

    threading.Thread(target=read, daemon=True).start()
    return proc, lines


def test_interrupt_prints_one_line_leaves_out_alone_and_resumes(tmp_path, sample_dir, sample_run):
    out = tmp_path / "out"
    shutil.copytree(sample_run, out)  # an earlier complete output: the interrupted run must not touch it
    before = _tree(out)
    env = {**os.environ, "WEBWINNOW_PROGRESS_SECONDS": "0.2", "PYTHONPATH": str(REPO / "lib")}
    argv = ["run", str(sample_dir), "--out", str(out), "--conf", str(CONF), "--conf", str(QUICK)]
    proc, lines = _start(argv, env)
    deadline = time.time() + 240
    while not any(line.startswith("webwinnow: hash_freq ...") for line in lines):
        assert proc.poll() is None and time.time() < deadline, lines
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    status = proc.wait(timeout=120)
    time.sleep(0.5)  # the reader thread's last lines
    assert status == 130, lines
    assert lines[-1] == f"webwinnow: interrupted; {out} unchanged; rerun with --resume to continue", lines
    assert not any("Traceback" in line or "py4j" in line.lower() or "Exception" in line for line in lines), lines
    # progress while extracting, in plain lines since stderr is a pipe
    assert any(line.startswith("webwinnow: extract: ") and "elapsed" in line and "records" in line for line in lines), lines
    assert _tree(out) == before
    log = (tmp_path / "out.incomplete" / "run.log").read_text()
    assert "WARN" in log and "webwinnow: extract done" in log and "interrupted" in log
    assert not (tmp_path / "out.lock").exists()

    proc, lines = _start([*argv, "--resume"], env)
    assert proc.wait(timeout=300) == 0, lines
    stdout = proc.stdout.read()
    assert "webwinnow: extract: kept from the interrupted run (same inputs and settings)" in lines
    assert "webwinnow: fingerprint: kept from the interrupted run (same inputs and settings)" in lines
    assert f"webwinnow: output: {out}" in stdout
    assert not (tmp_path / "out.incomplete").exists()
    _same_tables(sample_run, out)


def _children(pid: int, name: str) -> list[int]:
    """The processes of the session `pid` leads whose command line holds name."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == pid:
            continue
        try:
            if os.getsid(int(entry.name)) == pid and name in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except (OSError, ProcessLookupError):
            continue
    return found


def test_a_killed_jvm_is_one_line_exit_5_and_resume_continues(tmp_path, sample_dir, sample_run):
    """kill -9 of Spark's JVM (what the out-of-memory killer does) in the middle of a run."""
    out = tmp_path / "out"
    env = {**os.environ, "WEBWINNOW_PROGRESS_SECONDS": "1", "PYTHONPATH": str(REPO / "lib")}
    argv = ["run", str(sample_dir), "--out", str(out), "--conf", str(CONF), "--conf", str(QUICK)]
    proc, lines = _start(argv, env)
    deadline = time.time() + 240
    while not any(line.startswith("webwinnow: hash_freq ...") for line in lines):
        assert proc.poll() is None and time.time() < deadline, lines
        time.sleep(0.2)
    jvms = _children(proc.pid, "java")
    assert jvms, lines
    for pid in jvms:
        os.kill(pid, signal.SIGKILL)
    status = proc.wait(timeout=120)
    time.sleep(0.5)  # the reader thread's last lines
    assert status == 5, lines
    errors = [line for line in lines if "error" in line.lower() or "Traceback" in line]
    assert len(errors) == 1 and errors[0] == lines[-1], lines
    assert errors[0].startswith("webwinnow: error: Spark's JVM died") and "during the hash_freq stage" in errors[0]
    assert f"{out} is unchanged" in errors[0] and f"{tmp_path / 'out.incomplete' / 'run.log'}" in errors[0]
    assert "--resume" in errors[0]
    assert not out.exists() and not _children(proc.pid, "pyspark")  # nothing stayed alive
    assert main([*argv, "--resume"]) == 0
    _same_tables(sample_run, out)


def test_a_stage_alone_marks_downstream_stale_and_downstream_reruns(tmp_path, sample_run, capsys):
    out = tmp_path / "out"
    shutil.copytree(sample_run, out)
    conf = ["--conf", str(CONF)]
    assert main(["candidates", "--out", str(out), "--min-shared", "2", *conf]) == 0
    err = capsys.readouterr().err
    assert (
        "now stale (made from tables this command replaced): clusters, pairs, passages, report, template_kgrams, template_pairs"
        in err
    )
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["stale"]) == {"clusters", "pairs", "template_pairs", "template_kgrams", "passages", "report"}
    assert summary["extract"]["parsed"] == 311  # the run's other entries survive a stage run alone
    assert "run.log" in os.listdir(out) and "webwinnow candidates" in (out / "run.log").read_text()

    assert main(["report", "--out", str(out), *conf]) == 2
    assert "report reads pairs, which is stale (made from an earlier pair_seeds)" in capsys.readouterr().err

    assert main(["candidates", "--out", str(out), "--min-shared", "2", "--downstream", *conf]) == 0
    assert json.loads((out / "summary.json").read_text())["stale"] == {}
    pairs = {(r["doc_a"], r["doc_b"]) for r in pq.read_table(out / "pairs").to_pylist()}
    assert {(r["doc_a"], r["doc_b"]) for r in pq.read_table(out / "passages").to_pylist()} == pairs
    candidates = {(r["doc_a"], r["doc_b"]): r["shared"] for r in pq.read_table(out / "candidate_pairs").to_pylist()}
    template = {(r["doc_a"], r["doc_b"]) for r in pq.read_table(out / "template_pairs").to_pylist()}
    assert pairs | template == set(candidates) and not pairs & template and min(candidates.values()) >= 2

    # new fingerprints: the old hash_freq is stale and pairs counts boilerplate from the new ones
    assert main(["fingerprint", "--out", str(out), "--w", "4", *conf]) == 0
    stale = json.loads((out / "summary.json").read_text())["stale"]
    assert {"hash_freq", "rank_freq", "candidate_pairs", "pair_seeds", "pairs", "passages", "clusters", "report"} <= set(stale)
    assert main(["candidates", "--out", str(out), *conf]) == 0
    record = json.loads((out / "candidate_pairs" / "_webwinnow.json").read_text())
    fps = pq.read_table(out / "fingerprints").to_pandas()
    docs = fps.groupby("hash")["doc_id"].nunique()
    assert record["stats"]["boilerplate_hashes"] == int((docs > record["max_df"]).sum())
    assert record["config"]["winnow"]["w"] == 4


def test_a_corrupt_table_file_is_one_line_with_its_path(tmp_path, sample_run, capsys):
    out = tmp_path / "out"
    shutil.copytree(sample_run, out)
    part = sorted((out / "pairs").glob("*.parquet"))[0]
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    capsys.readouterr()
    assert main(["clusters", "--out", str(out), "--conf", str(CONF)]) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        f"webwinnow: error: {part} is corrupt (not a readable Parquet file): rerun the stage that "
        "writes its table, or the whole run"
    ), err
    assert not any("Traceback" in line or "at org.apache" in line for line in err)


@pytest.fixture()
def small_disk(tmp_path):
    """A 2 MiB filesystem: the sample's output (about 3.6 MB) does not fit."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.strip()}): the disk-full case needs one")
    yield mnt
    if subprocess.run(["umount", str(mnt)], check=False).returncode != 0:
        subprocess.run(["umount", "-l", str(mnt)], check=False)  # something still open: detach it


def test_a_full_disk_is_one_line_and_frees_the_space(small_disk, sample_dir, capsys):
    out = small_disk / "out"
    capsys.readouterr()
    assert main(["run", str(sample_dir), "--out", str(out), "--conf", str(CONF)]) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert any(line.startswith("webwinnow: error: disk full (ENOSPC)") for line in err), err
    assert not any("Traceback" in line for line in err)
    staged = small_disk / "out.incomplete"
    assert not out.exists() and not (small_disk / "out.lock").exists()
    assert {p.name for p in staged.iterdir()} <= {".webwinnow-output", "ledger", "run.log"}


def test_a_jvm_out_of_memory_names_the_memory_setting_and_resume_continues(tmp_path, sample_dir, sample_run):
    """A task's OutOfMemoryError ends a local JVM (exit 52): one line saying so and what to raise.
    The run resumes on the same small heap, where tables read twice are cached on disk only."""
    small_props = (
        (CONF.parent / "spark-local.properties").read_text().replace("spark.driver.memory=4g", "spark.driver.memory=512m")
    )
    confs = []
    for name, extra in (("failing", "\nspark.webwinnow.injectOutOfMemory=hash_freq\n"), ("small", "")):
        (tmp_path / f"{name}.properties").write_text(small_props + extra)
        (tmp_path / f"{name}.toml").write_text(f'[spark]\nproperties = "{tmp_path / f"{name}.properties"}"\n')
        confs.append(str(tmp_path / f"{name}.toml"))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO / "lib")}
    argv = ["run", str(sample_dir), "--out", str(out), "--conf", str(CONF), "--conf", str(QUICK)]
    proc, lines = _start([*argv, "--conf", confs[0]], env)
    status = proc.wait(timeout=300)
    time.sleep(0.5)  # the reader thread's last lines
    assert status == 5, lines
    errors = [line for line in lines if "error" in line.lower() or "Traceback" in line]
    assert len(errors) == 1 and errors[0] == lines[-1], lines
    assert errors[0].startswith("webwinnow: error: Spark ran out of memory (java.lang.OutOfMemoryError")
    assert "spark.driver.memory" in errors[0] and "during the hash_freq stage" in errors[0] and "--resume" in errors[0]
    assert not out.exists()
    proc, lines = _start([*argv, "--conf", confs[1], "--resume"], env)
    assert proc.wait(timeout=600) == 0, lines
    _same_tables(sample_run, out)
