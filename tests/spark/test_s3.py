"""S3 for real. Crawl files read from S3: a local S3 server (moto's server mode, on 127.0.0.1) holds the
sample crawl; runs over its folder and over a manifest of it give the same tables as the same
files read from disk, and its failures are one-line errors.

The server is configured the standard way (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION), as a user would point webwinnow at MinIO or S3.
"""

from __future__ import annotations

import gzip
import os
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from paths import CONF, QUICK

pytestmark = pytest.mark.spark

BUCKET = "crawls"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3(tmp_path_factory, sample_dir):
    """A moto S3 server holding the sample crawl under s3://crawls/sample/, two manifests of it
    under s3://crawls/lists/; yields the environment that points clients at it."""
    port = _free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with open(log, "wb") as fh:
        server = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], stdout=fh, stderr=subprocess.STDOUT
        )
    env = {
        **os.environ,
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "SAMPLE": str(sample_dir),
    }
    try:
        deadline = time.time() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.time() > deadline:
                    pytest.fail(f"the moto server did not start: {log.read_text()[-2000:]}")
                time.sleep(0.2)
        import boto3

        client = boto3.client(
            "s3",
            endpoint_url=env["AWS_ENDPOINT_URL"],
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )
        client.create_bucket(Bucket=BUCKET)
        names = sorted(p.name for p in sample_dir.glob("*.warc.gz"))
        for name in names:
            client.upload_file(str(sample_dir / name), BUCKET, f"sample/{name}")
            # readable without credentials too: the server is then a web server of crawl files
            client.put_object_acl(Bucket=BUCKET, Key=f"sample/{name}", ACL="public-read")
        relative = "".join(f"sample/{n}\n" for n in names)
        client.put_object(Bucket=BUCKET, Key="lists/warc.paths.gz", Body=gzip.compress(relative.encode()))
        # Hadoop's spelling of the same objects, as a manifest written for Spark might use
        absolute = "".join(f"s3a://{BUCKET}/sample/{n}\n" for n in names)
        client.put_object(Bucket=BUCKET, Key="lists/absolute.paths", Body=absolute.encode())
        yield env
    finally:
        server.terminate()
        server.wait(timeout=30)


def _webwinnow(env: dict, *args: str, confs: tuple[Path, ...] = (CONF,)) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "webwinnow", *args, *(a for c in confs for a in ("--conf", str(c)))],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )


def _keyed(out: Path, base: str) -> tuple[dict[int, tuple], dict[str, list]]:
    """Every table of an output with locations made relative to `base` and document ids replaced
    by (file, offset, url): ids are derived from where a file was read, the rest must not be."""
    docs = pq.read_table(out / "documents").to_pylist()
    key = {d["doc_id"]: (d["warc_file"].removeprefix(base), d["warc_offset"], d["url"]) for d in docs}
    assert len(set(key.values())) == len(key)

    def rows(table: str, drop=()) -> list:
        out_rows = []
        for r in pq.read_table(out / table).to_pylist():
            if r.get("source") in ("a", "b"):  # the side follows the ids' order: name the document
                r["source"] = r["doc_" + r["source"]]
            for col in ("doc_id", "doc_a", "doc_b", "cluster_id", "source", "source_doc"):
                if col in r and isinstance(r[col], int):
                    r[col] = key[r[col]]
            for col in ("warc_file", "file"):
                if r.get(col):
                    r[col] = r[col].removeprefix(base)
            for col in drop:
                r.pop(col)
            if "doc_a" in r:  # the pair's order follows the ids: compare unordered
                r["doc_a"], r["doc_b"] = sorted((r["doc_a"], r["doc_b"]))
            out_rows.append(tuple(sorted((k, repr(v)) for k, v in r.items())))
        return sorted(out_rows)

    tables = {
        "documents": rows("documents"),
        "ledger": rows("ledger"),
        "fingerprints": rows("fingerprints"),
        "doc_stats": rows("doc_stats"),
        # the snippet comes from the smallest doc id, and which that is follows the ids
        "hash_freq": rows("hash_freq", drop=("doc_id", "snippet")),
        "rank_freq": rows("rank_freq"),
        # which page is doc_a follows the ids: per-side columns are left out
        **{
            table: rows(
                table,
                drop=(
                    "url_a",
                    "url_b",
                    "fp_a",
                    "fp_b",
                    "containment_a",
                    "containment_b",
                    "content_chars_a",
                    "content_chars_b",
                    "content_share_a",
                    "content_share_b",
                    "copied_chars_a",
                    "copied_chars_b",
                ),
            )
            for table in ("pairs", "template_pairs")
        },
        "passages": Counter(r["length"] for r in pq.read_table(out / "passages").to_pylist()),
        "clusters": sorted(Counter(r["cluster_size"] for r in pq.read_table(out / "clusters").to_pylist()).items()),
    }
    return key, tables


@pytest.fixture(scope="module")
def s3_run(s3, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("from-s3") / "out"
    # quick.toml: the tables are compared, not the report's figures page (checked on the sample run)
    done = _webwinnow(s3, "run", f"s3://{BUCKET}/sample/", "--out", str(out), confs=(CONF, QUICK))
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_a_crawl_on_s3_gives_the_tables_of_the_same_files_on_disk(s3_run, sample_run, sample_dir):
    local_keys, local = _keyed(sample_run, f"{sample_dir}/")
    s3_keys, remote = _keyed(s3_run, f"s3://{BUCKET}/sample/")
    assert sorted(s3_keys.values()) == sorted(local_keys.values())
    for table, rows in local.items():
        assert remote[table] == rows, table
    assert local["pairs"] and local["passages"]  # the comparison compared something
    files = {r["file"] for r in pq.read_table(s3_run / "ledger").to_pylist()}
    assert files == {f"s3://{BUCKET}/sample/{p.name}" for p in sample_dir.glob("*.warc.gz")}


def test_manifests_globs_and_hadoop_spellings_name_the_same_objects(s3, s3_run, monkeypatch):
    """s3a:// lines (a manifest written for Spark) are read as s3://: the same locations, so the
    same document ids; sizes and times come from the store; a manifest with --prefix, a glob and
    the folder name the same files."""
    from webwinnow import storage
    from webwinnow.crawl.inputs import list_inputs

    for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION"):
        monkeypatch.setenv(k, s3[k])
    storage._root.cache_clear()
    try:
        files = list_inputs([f"s3a://{BUCKET}/lists/absolute.paths"], limit=2)
        listed = list_inputs([f"s3://{BUCKET}/sample/*.warc.gz"])
        # Common Crawl's layout: a gzipped manifest of relative lines, resolved under --prefix
        relative = list_inputs([f"s3://{BUCKET}/lists/warc.paths.gz"], prefix=f"s3a://{BUCKET}/")
        folder = list_inputs([f"s3://{BUCKET}/sample/"])
    finally:
        storage._root.cache_clear()
    documents = set(pq.read_table(s3_run / "documents").column("warc_file").to_pylist())
    assert [f.path for f in files] == sorted(documents)[:2]
    assert [f.path for f in listed] == sorted(documents)
    # the same files, sizes and times whichever way they are named: so the same run
    assert relative == folder == listed
    assert all(f.size > 1000 and f.mtime_ns for f in listed)


def test_missing_objects_and_unknown_buckets_are_one_line_errors(s3, tmp_path):
    cases = [
        ([f"s3://{BUCKET}/sample/nope.warc.gz"], r"1 input path does not exist: s3://crawls/sample/nope\.warc\.gz"),
        ([f"s3://{BUCKET}/nothing-here/"], "1 input path does not exist"),
        ([f"s3://{BUCKET}/lists/warc.paths.gz"], r"3 input paths do not exist: s3://crawls/lists/sample/"),
        (["s3://no-such-bucket/x.warc.gz"], r"no-such-bucket"),
    ]
    for args, message in cases:
        done = _webwinnow(s3, "extract", *args, "--out", str(tmp_path / "out"))
        assert done.returncode == 2, (args, done.stderr[-2000:])
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        assert re.search(message, lines[0]), lines[0]
        assert not (tmp_path / "out").exists()


def test_an_s3a_out_without_the_connector_is_one_line_naming_it(s3):
    """Tables are written by Spark through Hadoop: without hadoop-aws the run stops before any
    stage with the exact package to add, and nothing is written to the bucket."""
    import boto3

    first = sorted(Path(s3["SAMPLE"]).glob("*.warc.gz"))[0]
    done = _webwinnow(s3, "extract", str(first), "--out", f"s3a://{BUCKET}/out")
    assert done.returncode == 2, done.stderr[-2000:]
    lines = [line for line in done.stderr.strip().splitlines() if line.startswith("webwinnow: error")]
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert re.search(
        r"Spark \(Hadoop (\d+\.\d+\.\d+)\) has no filesystem for s3a:// .*"
        r"--packages org\.apache\.hadoop:hadoop-aws:\1 .*nothing was committed",
        lines[0],
    ), lines[0]
    client = boto3.client(
        "s3",
        endpoint_url=s3["AWS_ENDPOINT_URL"],
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    assert client.list_objects_v2(Bucket=BUCKET, Prefix="out").get("KeyCount") == 0


def test_generations_commit_and_collect_on_s3(s3, monkeypatch):
    """The commit protocol's store side on a real S3 API: tables the driver writes (pyarrow),
    their metadata, the commit record, the pointers of a stage run alone and the collection."""
    import pyarrow as pa

    from webwinnow import storage
    from webwinnow.config import load_config
    from webwinnow.outputs import generations as commit
    from webwinnow.outputs.tables import read_arrow, table_meta, write_arrow

    for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION"):
        monkeypatch.setenv(k, s3[k])
    storage._root.cache_clear()
    cfg = load_config([], {})
    out = f"s3a://{BUCKET}/gens"
    try:
        commit.check_out(out, fresh=True, force=False)
        gen1, resumed = commit.begin(out, "webwinnow run", resume=False)
        assert not resumed
        curve = pa.table({"rank": [1, 2], "rank_last": [1, 5], "docs": [9, 2], "hashes": [1, 4]})
        write_arrow(curve, gen1, "rank_freq", cfg, "hash_freq")
        write_arrow(curve, gen1, "clusters_like", cfg, "clusters")
        record = commit.publish(out, gen1, ("rank_freq", "clusters_like"))
        assert record["tables"]["rank_freq"] == f"{gen1}/rank_freq"
        assert read_arrow(record["tables"]["rank_freq"].rsplit("/", 1)[0], "rank_freq").equals(curve)
        commit.check_out(out, fresh=False, force=False)  # an output webwinnow wrote: accepted
        # a stage alone rewrites one table; the other is a pointer, the replaced one is collected
        gen2, _ = commit.begin(out, "webwinnow clusters", resume=False)
        assert commit.inherit(gen2, out, ("rank_freq", "clusters_like")) == ["clusters_like", "rank_freq"]
        assert table_meta(gen2, "rank_freq")["data"] == f"{gen1}/rank_freq"
        assert read_arrow(gen2, "rank_freq").equals(curve)  # read through the pointer
        write_arrow(curve.slice(0, 1), gen2, "clusters_like", cfg, "clusters")
        record = commit.publish(out, gen2, ("rank_freq", "clusters_like"))
        assert record["tables"] == {"rank_freq": f"{gen1}/rank_freq", "clusters_like": f"{gen2}/clusters_like"}
        names = {e.name for e in storage.walk(out)}
        assert f"s3://{BUCKET}/gens/runs/{storage.basename(gen1)}/clusters_like" not in names
        assert f"s3://{BUCKET}/gens/runs/{storage.basename(gen1)}/rank_freq/part-00000.zstd.parquet" in names
        assert commit.current_tables(out) == record["tables"]
    finally:
        storage._root.cache_clear()


def test_crawl_files_over_http_read_as_from_disk(s3, sample_dir, tmp_path):
    """https:// (Common Crawl's data.commoncrawl.org) through fsspec: a manifest's lines under an
    http --prefix are checked with HEAD requests (a web server has no listing) and read in ranged
    GETs; every row equals the row read from disk but for the location and the id made from it."""
    from webwinnow.config import ExtractConfig
    from webwinnow.crawl.inputs import list_inputs
    from webwinnow.crawl.records import file_rows

    names = sorted(p.name for p in sample_dir.glob("*.warc.gz"))
    manifest = tmp_path / "warc.paths"
    manifest.write_text("".join(f"sample/{n}\n" for n in names) * 3)  # repeated lines are one file
    web = f"{s3['AWS_ENDPOINT_URL']}/{BUCKET}/"
    files = list_inputs([str(manifest)], prefix=web)
    assert [(f.path, f.size) for f in files] == [(f"{web}sample/{n}", (sample_dir / n).stat().st_size) for n in names]
    cfg = ExtractConfig()
    for f, name in zip(files, names, strict=True):

        def plain(rows):
            return [{k: v for k, v in r.items() if k not in ("doc_id", "file")} for r in rows]

        assert plain(file_rows(f.path, cfg)) == plain(file_rows(str(sample_dir / name), cfg))
    with pytest.raises(Exception, match=r"1 input path does not exist: http://127\.0\.0\.1:\d+/crawls/sample/gone"):
        list_inputs([f"{web}sample/gone.warc.gz"])


def test_a_command_older_than_the_committed_run_does_not_commit_over_it(s3, monkeypatch):
    from webwinnow import storage
    from webwinnow.errors import UserError
    from webwinnow.outputs import generations as commit

    for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION"):
        monkeypatch.setenv(k, s3[k])
    storage._root.cache_clear()
    out = f"s3://{BUCKET}/race"
    try:
        older, _ = commit.begin(out, "webwinnow run", resume=False)
        newer, _ = commit.begin(out, "webwinnow run", resume=False)
        assert storage.basename(older) < storage.basename(newer)
        commit.publish(out, newer, ())
        with pytest.raises(UserError, match="a newer run .* was committed while this command ran"):
            commit.publish(out, older, ())
        assert commit.read_current(out)["generation"] == storage.basename(newer)
    finally:
        storage._root.cache_clear()
