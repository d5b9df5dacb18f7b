"""Writing the sample: WARC records, files and planted.json, and the command line."""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import uuid
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from .constants import _FILE_WINDOW, _IPS, HOSTS, LENGTH_CLASSES, MIN_PAGES, SCRIPT_SENTINEL, STYLE_SENTINEL
from .payloads import _http_date, _sha1_b32, _warc_date
from .planting import _Crawl


class _Writer:
    """Writes one WARC file with deterministic record ids and dates, and counts records."""

    def __init__(self, fh, ids: random.Random, counts: dict, ips: dict[str, str]):
        self.w = WARCWriter(fh, gzip=True)
        self.ips = ips
        self.ids = ids
        self.counts = counts
        self.info_id: str | None = None

    def new_id(self) -> str:
        return f"<urn:uuid:{uuid.UUID(int=self.ids.getrandbits(128), version=4)}>"

    def _write(self, rec) -> None:
        self.w.write_record(rec)
        t = rec.rec_headers.get_header("WARC-Type")
        self.counts[t] = self.counts.get(t, 0) + 1

    def warcinfo(self, filename: str, date: int, fields: dict) -> None:
        self.info_id = self.new_id()
        data = "".join(f"{k}: {v}\r\n" for k, v in fields.items()).encode("utf-8")
        rec = self.w.create_warc_record(
            "",
            "warcinfo",
            payload=io.BytesIO(data),
            length=len(data),
            warc_headers_dict={"WARC-Record-ID": self.info_id, "WARC-Date": _warc_date(date), "WARC-Filename": filename},
        )
        self._write(rec)

    def _hdrs(self, rid: str, date: int, url: str, extra=()) -> dict:
        host = url.split("/")[2]
        d = {"WARC-Record-ID": rid, "WARC-Date": _warc_date(date), "WARC-Warcinfo-ID": self.info_id}
        if host in self.ips:
            d["WARC-IP-Address"] = self.ips[host]
        d.update(extra)
        return d

    def request(self, url: str, date: int, concurrent_to: str, gzip_ok=False) -> None:
        host = url.split("/")[2]
        path = url.split(host, 1)[1] or "/"
        headers = [
            ("Host", host),
            ("User-Agent", "webwinnow-sample-crawler/1.0 (+http://sample.test/bot)"),
            ("Accept", "text/html,application/xhtml+xml,*/*;q=0.8"),
        ]
        if gzip_ok:
            headers.append(("Accept-Encoding", "gzip"))
        headers.append(("Connection", "close"))
        http = StatusAndHeaders(f"GET {path} HTTP/1.1", headers, is_http_request=True)
        rec = self.w.create_warc_record(
            url,
            "request",
            http_headers=http,
            warc_headers_dict=self._hdrs(self.new_id(), date, url, {"WARC-Concurrent-To": concurrent_to}),
        )
        self._write(rec)

    def response(self, url: str, date: int, status: str, headers: list, payload: bytes, rid: str) -> None:
        http = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
        rec = self.w.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(payload),
            length=len(payload),
            http_headers=http,
            warc_headers_dict=self._hdrs(rid, date, url),
        )
        self._write(rec)

    def revisit(self, url: str, date: int, headers: list, digest: str, refers_date: int, rid: str) -> None:
        http = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
        rec = self.w.create_revisit_record(
            url, digest, url, _warc_date(refers_date), http_headers=http, warc_headers_dict=self._hdrs(rid, date, url)
        )
        self._write(rec)

    def metadata(self, url: str, date: int, concurrent_to: str, fields: list) -> None:
        data = "".join(f"{k}: {v}\r\n" for k, v in fields).encode("utf-8")
        rec = self.w.create_warc_record(
            url,
            "metadata",
            payload=io.BytesIO(data),
            length=len(data),
            warc_content_type="application/warc-fields",
            warc_headers_dict=self._hdrs(self.new_id(), date, url, {"WARC-Concurrent-To": concurrent_to}),
        )
        self._write(rec)


def write_sample(out_dir, *, pages: int = 300, seed: int = 2003, files: int = 3, site_tag: str = "") -> dict:
    """Write the sample crawl into ``out_dir`` and return a summary.

    Writes ``files`` WARC files ``sample-00000.warc.gz`` ... and ``planted.json``. The output is
    byte-for-byte identical for the same arguments. ``pages`` is the number of ordinary HTML
    pages (mirrors, second versions, the 404 and the 301 come on top); at least ``MIN_PAGES``.

    The summary has ``warc_files`` (paths), ``planted`` (path), ``records`` (count per WARC-Type),
    ``records_per_file``, ``html_pages`` (HTML 200 responses), ``http_responses`` (by kind),
    ``planted_copies`` (total), ``copies_by_kind``, ``passages_by_class``, ``copies_cross_file`` and
    ``bytes`` (total size of the WARC files).

    ``site_tag`` (letters, digits and hyphens) puts the sites under other host names
    (``news.TAG.sample.test`` ...): crawls written with other seeds and tags are other sites, so
    their union grows like a crawl (more sites, the same share of copies and templates).
    """
    if pages < MIN_PAGES:
        raise ValueError(f"pages must be at least {MIN_PAGES}, got {pages}")
    if files < 1:
        raise ValueError(f"files must be at least 1, got {files}")
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)

    if site_tag and not all(ch.isascii() and (ch.isalnum() or ch == "-") for ch in site_tag):
        raise ValueError(f"site_tag must hold only ASCII letters, digits and hyphens, got {site_tag!r}")

    def tagged(host: str) -> str:
        return host.replace(".sample.test", f".{site_tag}.sample.test") if site_tag else host

    hosts = {k: tagged(v) for k, v in HOSTS.items()}
    ips = {tagged(h): ip for h, ip in _IPS.items()}
    crawl = _Crawl(pages, seed, files, hosts)
    crawl.build()
    crawl.make_events()

    ids = random.Random(f"webwinnow-sample:{seed}:ids")
    counts: dict[str, int] = {}
    per_file = []
    paths = []
    kinds = {"html_200": 0, "html_other_status": 0, "non_html": 0, "revisit": 0}
    digests: dict[tuple[str, int], str] = {}
    # responses must be written before revisits that refer to them: sort by time within files,
    # and revisits always come later in time (a later file, or later in the same file)
    for f in range(files):
        name = f"sample-{f:05d}.warc.gz"
        path = os.path.join(out_dir, name)
        paths.append(path)
        file_counts: dict[str, int] = {}
        with open(path, "wb") as fh:
            w = _Writer(fh, ids, file_counts, ips)
            w.warcinfo(
                name,
                f * _FILE_WINDOW,
                {
                    "software": "webwinnow-sample/1 (warcio)",
                    "format": "WARC File Format 1.0",
                    "isPartOf": f"webwinnow-sample-seed{seed}" + (f"-{site_tag}" if site_tag else ""),
                    "description": "Generated sample crawl with planted copies; see planted.json",
                    "robots": "ignore",
                    "hostname": "sample.test",
                },
            )
            events = sorted((e for e in crawl.events if e["file"] == f), key=lambda e: (e["date"], e["seq"]))
            for ev in events:
                rid = w.new_id()
                kind = ev["kind"]
                if kind == "page":
                    page = ev["page"]
                    _, payload, headers = crawl.page_payload(page)
                    w.request(page["url"], ev["date"], rid, gzip_ok=page["transfer"] == "gzip")
                    w.response(page["url"], ev["date"], "200 OK", headers, payload, rid)
                    digests[(page["url"], page["date"])] = _sha1_b32(payload)
                    kinds["html_200"] += 1
                    if page["metadata"]:
                        w.metadata(
                            page["url"],
                            ev["date"],
                            rid,
                            [
                                ("via", f"http://{page['host']}/"),
                                ("hopsFromSeed", "L"),
                                ("fetchTimeMs", "87"),
                                *[("outlink", f"http://{page['host']}{h} L a/@href") for _, h in crawl.sites["news"]["nav"][:5]],
                            ],
                        )
                elif kind == "revisit":
                    page = ev["page"]
                    _, payload, headers = crawl.page_payload(page)
                    headers = [(k, _http_date(ev["date"]) if k == "Date" else v) for k, v in headers]
                    w.request(page["url"], ev["date"], rid)
                    w.revisit(page["url"], ev["date"], headers, digests[(page["url"], page["date"])], page["date"], rid)
                    kinds["revisit"] += 1
                elif kind == "static":
                    headers = [
                        ("Date", _http_date(ev["date"])),
                        ("Server", "Apache/1.3.27 (Unix)"),
                        ("Content-Type", ev["ctype"]),
                        ("Content-Length", str(len(ev["body"]))),
                        ("Connection", "close"),
                    ]
                    w.request(ev["url"], ev["date"], rid)
                    w.response(ev["url"], ev["date"], "200 OK", headers, ev["body"], rid)
                    kinds["non_html"] += 1
                elif kind == "status":
                    headers = [("Date", _http_date(ev["date"])), ("Server", "Apache/1.3.27 (Unix)")]
                    if ev["location"]:
                        headers.append(("Location", ev["location"]))
                    charset = "iso-8859-1" if ev["location"] else "utf-8"
                    headers += [
                        ("Content-Type", f"text/html; charset={charset}"),
                        ("Content-Length", str(len(ev["body"]))),
                        ("Connection", "close"),
                    ]
                    w.request(ev["url"], ev["date"], rid)
                    w.response(ev["url"], ev["date"], ev["status"], headers, ev["body"], rid)
                    kinds["html_other_status"] += 1
                else:  # pragma: no cover
                    raise AssertionError(kind)
        per_file.append(dict(sorted(file_counts.items())))
        for k, v in file_counts.items():
            counts[k] = counts.get(k, 0) + v

    copies = crawl.copy_records()
    copies_by_kind: dict[str, int] = {}
    by_class: dict[str, int] = {c: 0 for c in LENGTH_CLASSES}
    for c in copies:
        copies_by_kind[c["kind"]] = copies_by_kind.get(c["kind"], 0) + 1
        if c["kind"] == "passage":
            by_class[c["length_class"]] += 1
    planted = {
        "seed": seed,
        "pages": pages,
        "files": files,
        "normalization": "casefold, keep str.isalnum() characters",
        "length_classes": {k: list(v) for k, v in LENGTH_CLASSES.items()},
        "sentinels": {"script": SCRIPT_SENTINEL, "style": STYLE_SENTINEL},
        "hosts": {**hosts, "news_www": "www." + hosts["news"]},
        "special": crawl.special,
        "copies": copies,
    }
    planted_path = os.path.join(out_dir, "planted.json")
    with open(planted_path, "w", encoding="utf-8", newline="\n") as out:
        out.write(json.dumps(planted, ensure_ascii=False, indent=1) + "\n")

    return {
        "warc_files": paths,
        "planted": planted_path,
        "records": dict(sorted(counts.items())),
        "records_per_file": per_file,
        "html_pages": kinds["html_200"],
        "http_responses": kinds,
        "planted_copies": len(copies),
        "copies_by_kind": copies_by_kind,
        "passages_by_class": by_class,
        "copies_cross_file": sum(c["src_file"] != c["dst_file"] for c in copies),
        "bytes": sum(os.path.getsize(p) for p in paths),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m webwinnow.sample",
        description="Write the deterministic sample crawl (WARC files + planted.json) into OUT_DIR.",
    )
    parser.add_argument("out_dir", metavar="OUT_DIR")
    parser.add_argument("--pages", type=int, default=300, help=f"ordinary HTML pages (default 300, minimum {MIN_PAGES})")
    parser.add_argument("--seed", type=int, default=2003, help="RNG seed (default 2003)")
    parser.add_argument("--files", type=int, default=3, help="number of WARC files (default 3)")
    parser.add_argument("--site-tag", default="", help="host names news.TAG.sample.test ... (default: none)")
    args = parser.parse_args(argv)
    try:
        summary = write_sample(args.out_dir, pages=args.pages, seed=args.seed, files=args.files, site_tag=args.site_tag)
    except ValueError as exc:
        parser.error(str(exc))
    for path in summary["warc_files"]:
        print(f"warc: {path}")
    print(f"planted: {summary['planted']}")
    for key in ("records", "http_responses", "copies_by_kind", "passages_by_class"):
        print(f"{key}: " + ", ".join(f"{k}={v}" for k, v in summary[key].items()))
    for key in ("html_pages", "planted_copies", "copies_cross_file", "bytes"):
        print(f"{key}: {summary[key]}")
    return 0


_SAMPLE_FILE = re.compile(r"sample-\d{5}\.warc\.gz")


def sample_folder(out: str) -> Path:
    """The local folder `webwinnow sample OUT` writes (file:// accepted); a store's URI raises
    ValueError: the generator writes local files, to be uploaded afterwards."""
    from .. import storage

    where = storage.canonical(out)
    if not storage.is_local(where):
        raise ValueError(f"{out}: the sample is written to a local folder; upload it afterwards")
    return Path(where)


def clear_old_sample(out: Path) -> None:
    """Let `webwinnow sample OUT` write only into a new or empty folder, or over a sample it wrote
    before (whose WARC files it then removes, so none of an older, larger sample is left);
    anything else raises ValueError, and nothing is touched."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} is a file: give a folder for the sample crawl")
    names = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    if not names:
        return
    foreign = [n for n in names if n != "planted.json" and not _SAMPLE_FILE.fullmatch(n)]
    try:
        planted = json.loads((out / "planted.json").read_text(encoding="utf-8"))
        ours = isinstance(planted, dict) and {"seed", "pages", "copies"} <= planted.keys()
    except (OSError, ValueError):
        ours = False
    if foreign or not ours:
        shown = ", ".join((foreign or names)[:5]) + (" ..." if len(foreign or names) > 5 else "")
        raise ValueError(
            f"{out} holds files that are not a webwinnow sample ({shown}): write the sample into a new or empty folder"
        )
    for name in names:
        if _SAMPLE_FILE.fullmatch(name):
            (out / name).unlink()
