"""Configuration layering, validation and the command line's error messages."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import tomllib

import pytest

from webwinnow.app.cli import main
from webwinnow.app.options import _parser, resolve_config
from webwinnow.config import ExtractConfig, RunConfig, SparkConfig, WinnowConfig, load_config
from webwinnow.errors import UserError

from paths import CONF


def test_shipped_toml_spells_out_the_defaults():
    with open(CONF, "rb") as fh:
        data = tomllib.load(fh)
    defaults = RunConfig()
    assert data["winnow"] == dataclasses.asdict(defaults.winnow)
    assert data["extract"] == dataclasses.asdict(defaults.extract)
    for section in ("pairing", "passages", "clusters", "report", "dedup", "check"):
        assert data[section] == dataclasses.asdict(getattr(defaults, section)), section
    spark = dict(data["spark"])
    assert spark.pop("properties") == "spark-local.properties"
    assert spark == {k: v for k, v in dataclasses.asdict(SparkConfig()).items() if k != "properties"}


def test_layers_files_then_overrides(tmp_path):
    a = tmp_path / "a.toml"
    a.write_text("[winnow]\nk = 30\nw = 20\n[extract]\nmax_nesting = 50\n")
    b = tmp_path / "b.toml"
    b.write_text("[winnow]\nw = 40\n")
    cfg = load_config([a, b], {"winnow": {"robust": False, "k": None}})
    assert cfg.winnow == WinnowConfig(k=30, w=40, robust=False)
    assert cfg.extract.max_nesting == 50
    assert cfg.winnow.t == 69


def test_properties_path_is_relative_to_its_toml():
    cfg = load_config([CONF])
    assert cfg.spark.properties.endswith("conf/spark-local.properties")


@pytest.mark.parametrize(
    "text, message",
    [
        ("[winnow]\nk = 0\n", "k (the noise threshold) must be an integer >= 1"),
        ("[winnow]\nw = 0\n", "w (the window) must be an integer >= 1"),
        ("[winnow]\nwindow = 3\n", "unknown key winnow.window"),
        ("[pair]\nx = 1\n", "unknown section [pair]"),
        ("[clusters]\nresemblance = 1.5\n", "clusters.resemblance must be within"),
        ("[clusters]\ndriver_edges = -1\n", "clusters.driver_edges must be an integer >= 0 (0: always in Spark)"),
        ("[clusters]\ndriver_edges = true\n", "clusters.driver_edges must be an integer >= 0"),
        ('[clusters]\ndriver_edges = "5M"\n', "clusters.driver_edges must be an integer >= 0"),
        (
            "[pairs]\nreport_pairs = 5\n",
            "[pairs] was split into [pairing], [passages], [clusters] and [report]: pairs.report_pairs is now report.pairs",
        ),
        ("[extract]\nmax_nesting = -1\n", "extract.max_nesting must be a positive integer"),
        ("[winnow\n", "is not valid TOML"),
    ],
)
def test_bad_config_is_a_clear_error(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        load_config([path])


def test_missing_config_file(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_config([tmp_path / "nope.toml"])


def test_t_sets_the_window():
    args = _parser().parse_args(["run", "x.warc", "--out", "o", "--k", "20", "--t", "119"])
    assert resolve_config(args).winnow == WinnowConfig(k=20, w=100)
    args = _parser().parse_args(["fingerprint", "--out", "o", "--t", "60", "--standard", "--mod-p", "7"])
    assert resolve_config(args).winnow == WinnowConfig(k=50, w=11, robust=False, mod_p=7)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "x.warc", "--out", "o", "--k", "50", "--t", "20"], "t (the guarantee threshold) must be an integer >= k = 50"),
        (["run", "x.warc", "--out", "o", "--k", "0"], "k (the noise threshold) must be an integer >= 1"),
        (["run", "x.warc", "--out", "o", "--w", "-3"], "w (the window) must be an integer >= 1"),
        (["extract", "does/not/exist/*.warc.gz", "--out", "o"], "names none of the crawl files"),
    ],
)
def test_cli_reports_bad_arguments(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err


def test_w_and_t_are_exclusive(capsys):
    with pytest.raises(SystemExit):
        _parser().parse_args(["run", "x.warc", "--out", "o", "--w", "5", "--t", "60"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_extract_config_rejects_non_integers():
    with pytest.raises(ValueError, match="task_bytes"):
        ExtractConfig(task_bytes="big")


def test_the_direct_command_applies_the_projects_conf(monkeypatch):
    """`webwinnow run ...` without --conf uses conf/webwinnow.toml, as `make run` does."""
    monkeypatch.delenv("WEBWINNOW_CONF", raising=False)
    args = _parser().parse_args(["run", "x.warc", "--out", "o"])
    assert resolve_config(args) == load_config([CONF])
    assert resolve_config(args).spark.properties.endswith("conf/spark-local.properties")
    monkeypatch.setenv("WEBWINNOW_CONF", "")
    assert resolve_config(args) == RunConfig()


def test_each_stage_takes_only_its_options(capsys):
    with pytest.raises(SystemExit):
        _parser().parse_args(["clusters", "--out", "o", "--max-df", "3"])
    assert "unrecognized arguments: --max-df" in capsys.readouterr().err
    assert _parser().parse_args(["clusters", "--out", "o", "--cluster-resemblance", "0.8", "--downstream"]).downstream


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["run", "x.warc", "--out", "o", "--kk", "5"],
            "webwinnow run: error: unrecognized arguments: --kk 5 (did you mean --k?)",
        ),
        (["clusters", "--out", "o", "--max-df", "3"], "webwinnow clusters: error: unrecognized arguments: --max-df 3"),
        (["run", "x.warc", "--out", "o", "--unit", "word", "--lexer", "python"], "--lexer python: a lexer tokenizes code"),
        (["index", "x.warc", "--out", "o", "--lexer", "python"], "and this command counts chars; add --unit code"),
        (["pairs", "--out", "o"], "the stage 'pairs' is now called 'candidates'"),
    ],
)
def test_options_that_would_do_nothing_are_refused_by_the_command_that_got_them(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with contextlib.suppress(SystemExit):  # argparse's own errors exit 2 themselves
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "usage: webwinnow COMMAND" not in err
    assert not (tmp_path / "o").exists()


def test_a_code_runs_summary_counts_tokens():
    from webwinnow.stages import stage

    stats = {"documents": 2, "norm_chars": 90, "kgrams": 50, "fingerprints": 9, "density": 0.18}
    (line, _) = stage("fingerprint").summary(stats, {"k": 23, "w": 17, "robust": True, "mod_p": 0, "unit": "code"})
    assert "t=39 tokens" in line and "90 code tokens" in line


def test_a_setting_that_makes_the_run_meaningless_is_said_in_the_summary():
    from webwinnow.stages import stage

    char = {"k": 100_000, "w": 100, "robust": True, "mod_p": 0}
    none = {"documents": 3, "norm_chars": 9_000, "kgrams": 0, "fingerprints": 0, "density": 0.0}
    assert "warning: no fingerprint was made: no document is k = 100,000 normalized characters long" in " ".join(
        stage("fingerprint").summary(none, char)
    )
    code = {"k": 23, "w": 17, "robust": True, "mod_p": 0, "unit": "code"}
    assert "none of the 3 documents holds a code block" in " ".join(stage("fingerprint").summary(none | {"norm_chars": 0}, code))
    fine = {"documents": 3, "norm_chars": 9_000, "kgrams": 8_000, "fingerprints": 150, "density": 0.0187}
    assert not [line for line in stage("fingerprint").summary(fine, char | {"k": 50}) if "warning" in line]
    read = {"files": 1, "tasks": 1, "records": 12, "parsed": 0, "skipped": 12, "failed": 0, "flagged": 0, "failed_files": 0}
    assert "no record became a document" in stage("extract").summary(read, char)[-1]


def test_show_columns_says_what_the_columns_of_the_pairs_and_passages_mean(capsys):
    assert main(["show", "--columns", "pairs"]) == 0
    out = capsys.readouterr().out.splitlines()
    from webwinnow.schemas import PAIRS

    rows = {line.split()[0]: line for line in out[1:]}
    assert out[0] == "pairs:" and list(rows) == PAIRS.names
    for name in ("shared", "resemblance", "containment_a", "source", "copied_chars_a", "content_chars_b", "longest_content"):
        assert len(rows[name].split()) > 2, rows[name]  # a meaning, not only a name and a type
    assert main(["show", "--columns", "nothing"]) == 2 and "no such table" in capsys.readouterr().err
    assert main(["show"]) == 2 and "show needs --out OUT" in capsys.readouterr().err


def test_a_bug_is_one_line_on_the_terminal_and_the_traceback_in_the_log(tmp_path, monkeypatch, capsys):
    """A run's own output goes to its log (capture), so an unexpected exception would otherwise
    end the command with exit 1 and nothing said on the terminal."""
    import webwinnow.app.cli as cli

    def broken(plan, console, capture=False):
        raise RuntimeError("a broken invariant\nmore detail")

    monkeypatch.setattr(cli, "run_stages", broken)
    crawl = tmp_path / "items.jsonl"
    crawl.write_text('{"id": "a", "text": "one page"}\n')
    with pytest.raises(RuntimeError):
        main(["extract", str(crawl), "--out", str(tmp_path / "out"), "--conf", str(CONF)])
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: a broken invariant; the traceback is in " in err
    assert "run.log; please report it" in err and "more detail" not in err


@pytest.mark.parametrize(
    "args, env, said",
    [
        # pyspark refuses SPARK_REMOTE beside a master with a traceback
        (
            ["--master", "local[1]"],
            {"SPARK_REMOTE": "sc://127.0.0.1:15002"},
            "SPARK_REMOTE=sc://127.0.0.1:15002 and a master (local[1]) were both given",
        ),
        (
            ["--remote", "sc://127.0.0.1:15002", "--master", "local[1]"],
            {},
            "--remote=sc://127.0.0.1:15002 and a master (local[1]) were both given",
        ),
        (
            ["--remote", "http://127.0.0.1:15002"],
            {},
            "--remote=http://127.0.0.1:15002: a Spark Connect endpoint is sc://HOST:PORT",
        ),
        (["--remote", "sc://127.0.0.1:not-a-port"], {}, "sc://127.0.0.1:not-a-port: a Spark Connect endpoint is sc://HOST:PORT"),
        # nothing listens there (a port just freed): said at once, where the client retries for minutes
        (["--remote", "sc://127.0.0.1:{free}"], {}, "sc://127.0.0.1:{free}: no Spark Connect server at 127.0.0.1:{free}"),
        ([], {"SPARK_REMOTE": "sc://127.0.0.1:{free}/;user_id=x"}, "no Spark Connect server at 127.0.0.1:{free}"),
    ],
)
def test_a_spark_connect_endpoint_it_cannot_use_is_one_line_before_anything_is_written(
    capsys, tmp_path, monkeypatch, args, env, said
):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = str(s.getsockname()[1])
    from webwinnow.stages import _session

    monkeypatch.setattr(_session, "CONNECT_TIMEOUT", 2)  # refused connections are retried this long
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    crawl = tmp_path / "x.warc"
    crawl.write_bytes(b"")
    for key, value in env.items():
        monkeypatch.setenv(key, value.replace("{free}", free))
    assert main(["run", str(crawl), "--out", "o", *(a.replace("{free}", free) for a in args)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("webwinnow: error: ") and said.replace("{free}", free) in err[-1], err
    assert "Traceback" not in "\n".join(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.warc"]  # no output folder, no .incomplete


def test_spark_remote_is_the_endpoint_unless_remote_is_given(monkeypatch):
    from webwinnow.config import SparkConfig
    from webwinnow.stages._session import remote_url

    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    assert remote_url(SparkConfig()) == ""
    monkeypatch.setenv("SPARK_REMOTE", "sc://env:15002")
    assert remote_url(SparkConfig()) == "sc://env:15002"
    assert remote_url(SparkConfig(remote="sc://given:1")) == "sc://given:1"
    monkeypatch.setitem(sys.modules, "grpc", None)  # the client's packages absent: what to install
    with pytest.raises(
        UserError, match=r"the Spark Connect client is not installed \(grpc is missing\): pip install 'webwinnow\[connect\]'"
    ):
        remote_url(SparkConfig())
