"""The report in a real headless browser: it renders, marks the planted passage, loads its plot, and its
Content-Security-Policy blocks scripts."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from webwinnow.htmlreport import HashView, PairView, write_report

from reportdata import FIT, HOSTILE_TEXT, HOSTILE_URLS, RUNS, STATS, Dom, pair

# ---------------------------------------------------------------------------- in a real browser

CHROMIUM = "/usr/bin/chromium"
PLANTED = "Winnowing selects the minimum hash in every window — naïve copying, 日本語, détecté."


def chromium(target: Path, *args: str, timeout: float = 25.0) -> subprocess.CompletedProcess:
    if not os.path.exists(CHROMIUM):
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests need Debian's chromium. Run `make test` (it installs "
            "chromium), or `apt-get install -y chromium`; deselect these tests with -m 'not browser'."
        )
    with tempfile.TemporaryDirectory(prefix="webwinnow-chromium-") as profile:
        cmd = [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            *args,
            target.resolve().as_uri(),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def csp_violations(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "Content Security Policy" in line]


@pytest.fixture(scope="module")
def browser_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    before, after = "Some unrelated opening text.\n\n", "\n\nAnd then something else entirely."
    text_a = before + PLANTED + after + "\n" + HOSTILE_TEXT
    text_b = "Another page quotes it: " + PLANTED + " — end. " + HOSTILE_TEXT
    sa, sb = len(before), text_b.index(PLANTED)
    top = PairView(
        doc_a=11,
        doc_b=42,
        url_a="https://top.example/original?x=1&y=2",
        url_b="http://mirror.example/copy",
        shared=30,
        fp_a=31,
        fp_b=60,
        resemblance=0.49,
        containment_a=0.968,
        containment_b=0.5,
        text_a=text_a,
        text_b=text_b,
        passages=((sa, sa + len(PLANTED), sb, sb + len(PLANTED), 70),),
    )
    others = [
        pair(i, url_a=HOSTILE_URLS[i % len(HOSTILE_URLS)], url_b=HOSTILE_TEXT, containment_a=0.5 - i / 1000) for i in range(1, 60)
    ]
    hashes = [HashView(hash=i, docs=500 - i, occurrences=900, hosts=30, snippet=HOSTILE_TEXT) for i in range(20)]
    index = write_report(root / "report", stats=STATS, pairs=[top, *others], boilerplate=hashes, rank_freq=RUNS, fit=FIT)
    return index.parent, top


@pytest.mark.browser
def test_browser_index_page(browser_report):
    root, top = browser_report
    t0 = time.monotonic()
    done = chromium(root / "index.html", "--dump-dom")
    dom = Dom(done.stdout)
    assert dom.named("title") and "webwinnow report" in dom.text()
    assert not dom.named("script") and not dom.named("iframe") and not dom.named("svg")
    assert not [a for a in dom.named("img")]  # no image on the index, so none injected either
    links = {a["href"]: a for a in dom.named("a")}
    for url in (top.url_a, top.url_b):
        assert url in dom.text()
        assert links[url]["rel"] == "noopener noreferrer"
    assert links[f"pair/{top.key}.html"]
    assert "pairs-002.html" in links
    assert not any(h.lower().lstrip().startswith(("javascript", "data:", "vbscript")) for h in links)
    assert HOSTILE_TEXT in dom.text()  # shown as text
    assert not csp_violations(done.stderr), csp_violations(done.stderr)  # our own styles are allowed
    assert time.monotonic() - t0 < 25


@pytest.mark.browser
def test_browser_pair_page_marks_the_planted_passage(browser_report):
    root, top = browser_report
    done = chromium(root / "pair" / f"{top.key}.html", "--dump-dom")
    dom = Dom(done.stdout)
    assert dom.marks == [("text-a", PLANTED), ("text-b", PLANTED)]
    assert dom.column_text("text-a") == top.text_a
    assert dom.column_text("text-b") == top.text_b
    assert not dom.named("script") and not dom.named("img") and not dom.named("svg")
    assert {a["id"] for a in dom.named("a") if a.get("class") == "pn"} == {"a1", "b1"}
    assert not csp_violations(done.stderr), csp_violations(done.stderr)


@pytest.mark.browser
def test_browser_boilerplate_page_loads_its_plot(browser_report):
    root, _ = browser_report
    done = chromium(root / "boilerplate.html", "--dump-dom")
    dom = Dom(done.stdout)
    assert [a["src"] for a in dom.named("img")] == ["rank_frequency.png"]
    assert HOSTILE_TEXT in dom.text() and not dom.named("script") and not dom.named("svg")
    assert not csp_violations(done.stderr), csp_violations(done.stderr)  # the plot is not blocked


@pytest.mark.browser
def test_browser_csp_blocks_a_script_that_got_through(browser_report, tmp_path):
    """Belt and braces: were escaping ever to fail, the page's CSP stops the script."""
    root, top = browser_report
    source = (root / "pair" / f"{top.key}.html").read_text(encoding="utf-8")
    injected = source.replace("<main>", '<main><script>document.title = "PWNED";</script>', 1)
    # control: without the CSP meta tag the script runs (so --dump-dom would show it)
    bare = tmp_path / "bare.html"
    bare.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", injected), encoding="utf-8")
    assert re.search(r"<title>PWNED</title>", chromium(bare, "--dump-dom").stdout)
    evil = tmp_path / "evil.html"
    evil.write_text(injected, encoding="utf-8")
    done = chromium(evil, "--dump-dom")
    title = re.search(r"<title>(.*?)</title>", done.stdout, re.S)
    assert title and title.group(1) != "PWNED" and "Pair #1" in title.group(1)
    assert csp_violations(done.stderr)


@pytest.mark.browser
def test_browser_screenshot(browser_report, tmp_path):
    root, top = browser_report
    shot = tmp_path / "pair.png"
    chromium(root / "pair" / f"{top.key}.html", f"--screenshot={shot}", "--window-size=1400,1000")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1400, 1000)
    assert len(data) > 20_000  # a rendered page, not a blank one
    keep = os.environ.get("WEBWINNOW_SCREENSHOT_DIR")
    if keep:
        shutil.copy(shot, Path(keep) / "pair.png")


@pytest.mark.browser
def test_browser_bidi_controls_and_nul_bytes_are_shown_inert(tmp_path):
    """A URL holding U+202E would read 'exe.txt' backwards, and NUL bytes from WET text vanish:
    the report writes both visibly, in headings, links, tables and texts."""
    from webwinnow.htmlreport.pages import pair_file

    evil = "https://evil.example/\u202etxt.exe"
    text = "Plain words \u202edesrever\u202c and a NUL \x00 here. " + PLANTED
    p = PairView(
        doc_a=1,
        doc_b=2,
        url_a=evil,
        url_b="http://b.example/\u2066x\u2069",
        shared=3,
        fp_a=4,
        fp_b=4,
        resemblance=0.5,
        containment_a=0.9,
        containment_b=0.9,
        text_a=text,
        text_b=text,
        passages=((0, len(text), 0, len(text), 99),),
    )
    index = write_report(tmp_path / "report", stats=STATS, pairs=[p], boilerplate=[], rank_freq=RUNS, fit=FIT)
    for page in (index, index.parent / pair_file(p)):
        raw = page.read_text(encoding="utf-8")
        assert not any(c in raw for c in "\u202e\u202c\u2066\u2069\x00"), page.name
        dom = Dom(chromium(page, "--dump-dom").stdout)
        shown = dom.text()
        assert "https://evil.example/⟨U+202E⟩txt.exe" in shown and "⟨U+2066⟩x⟨U+2069⟩" in shown, page.name
        hrefs = [a["href"] for a in dom.named("a") if "evil.example" in (a.get("href") or "")]
        assert hrefs and all(h == "https://evil.example/%E2%80%AEtxt.exe" for h in hrefs), hrefs
    assert "a NUL ⟨U+0000⟩ here" in Dom(chromium(index.parent / pair_file(p), "--dump-dom").stdout).text()


@pytest.mark.browser
def test_browser_the_source_is_the_page_with_the_earlier_deciding_time(tmp_path):
    """A mirror fetched first but modified later is not the source: the listing shows the dates
    the choice was made on, the pair page every time of both pages, the deciding one marked."""
    from webwinnow.htmlreport.pages import pair_file

    text = "Some shared words. " + PLANTED
    p = PairView(
        doc_a=5,
        doc_b=6,
        url_a="https://news.example/story",
        url_b="https://mirror.example/story",
        shared=3,
        fp_a=4,
        fp_b=4,
        resemblance=0.5,
        containment_a=0.9,
        containment_b=0.9,
        text_a=text,
        text_b=text,
        passages=((0, len(text), 0, len(text), 99),),
        source="a",
        source_basis="last_modified",
        fetch_a="2003-05-14T10:00:00Z",
        fetch_b="2003-05-13T09:00:00Z",
        last_modified_a="2003-05-02T08:00:00Z",
        last_modified_b="2003-05-03T08:00:00Z",
        http_date_a="2003-05-14T10:00:01Z",
        http_date_b=None,
    )
    index = write_report(tmp_path / "report", stats=STATS, pairs=[p], boilerplate=[], rank_freq=RUNS, fit=FIT)
    listing = Dom(chromium(index, "--dump-dom").stdout).text()
    assert "news.example · 2003-05-02" in listing and "mirror.example · 2003-05-03" in listing
    assert "2003-05-13" not in listing and "2003-05-14" not in listing  # fetch dates decided nothing
    dumped = chromium(index.parent / pair_file(p), "--dump-dom").stdout
    page = Dom(dumped)
    decided = re.findall(r'<strong class="decided"[^>]*>([^<]*)</strong>', dumped)
    assert decided == ["HTTP Last-Modified 2003-05-02T08:00:00Z", "HTTP Last-Modified 2003-05-03T08:00:00Z"], decided
    shown = page.text()
    assert "WARC-Date 2003-05-14T10:00:00Z" in shown and "HTTP Date —" in shown
    assert "document A: the earlier by HTTP Last-Modified" in shown
    assert min(p.last_modified_a, p.last_modified_b) == p.last_modified_a  # the source has the earlier deciding time
