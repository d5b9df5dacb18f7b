"""The crawl plan: pages, planted passages, mirrors, versions and special records."""

from __future__ import annotations

import json
import random
from typing import Any

from .constants import _CLASS_COUNTS, _FILE_WINDOW, _SHORT_TARGETS, _THRESHOLD_TARGETS, HOSTS, LENGTH_CLASSES, _nlen
from .language import _foreign_sentence, _Lang
from .payloads import _chunked, _gzip, _http_date, _pdf, _png, _warc_date
from .sites import (
    _CSS,
    _blog_body,
    _case,
    _copy_blocks,
    _docs_body,
    _edit_blocks,
    _foreign_body,
    _make_sites,
    _news_body,
    _render_main,
    _render_page,
    _slug,
    _visible,
)


class _Crawl:
    def __init__(self, pages: int, seed: int, files: int, hosts: dict[str, str] = HOSTS):
        self.hosts = hosts
        self.n_pages = pages
        self.seed = seed
        self.files = files
        self.rng = random.Random(f"webwinnow-sample:{seed}:plan")
        self.lang = _Lang(random.Random(f"webwinnow-sample:{seed}:lang"))
        self.sites = _make_sites(self.lang)
        self.pages: list[dict] = []
        self.extra: list[dict] = []  # mirror pages
        self.events: list[dict] = []
        self.copies: list[tuple[dict, dict, dict]] = []
        self.special: dict[str, str] = {}
        self._urls: set[str] = set()
        self._groups = 0  # planted source passages, to keep later insertions out of them

    # -- helpers -------------------------------------------------------------------------------
    def _unique(self, url: str) -> str:
        base, n = url, 2
        while url in self._urls:
            stem, dot, ext = base.rpartition(".") if base.endswith(".html") else (base, "", "")
            url = f"{stem}-{n}{dot}{ext}"
            n += 1
        self._urls.add(url)
        return url

    def _fetch_time(self, file: int, first_half=False) -> int:
        span = _FILE_WINDOW // 2 if first_half else int(_FILE_WINDOW * 0.9)
        return file * _FILE_WINDOW + 600 + self.rng.randrange(span)

    def _other_file(self, f: int, p_other=0.75) -> int:
        if self.files > 1 and self.rng.random() < p_other:
            return self.rng.choice([x for x in range(self.files) if x != f])
        return f

    def _new_page(self, site: str, idx: int) -> dict:
        lang, rng = self.lang, self.rng
        day = 1 + idx % 28
        date = f"2003-04-{day:02d}"
        if site == "news":
            title = lang.headline()
            path = f"/2003/04/{_slug(title)}.html"
            blocks = _news_body(lang, date)
        elif site == "docs":
            kind = rng.choice(["configuration", "reference", "guide", "overview", "internals"])
            title = f"{rng.choice(lang.names)} {rng.choice(lang.nouns)} {kind}"
            path = "/wiki/" + title.replace(" ", "_")
            blocks = _docs_body(lang)
        else:
            title = lang.headline()
            path = f"/2003/04/{_slug(title)}.html"
            blocks = _blog_body(lang, date)
        url = self._unique(f"http://{self.hosts[site]}{path}")
        page: dict[str, Any] = {
            "id": len(self.pages),
            "site": site,
            "template": site,
            "host": self.hosts[site],
            "url": url,
            "path": url.split(self.hosts[site], 1)[1],
            "title": title,
            "blocks": blocks,
            "charset": "utf-8",
            "http_charset": True,
            "meta_charset": "utf-8" if site != "docs" else None,
            "transfer": None,
            "edited": f"{day} April 2003, at {10 + idx % 12}:{idx % 60:02d}",
            "file": rng.randrange(self.files),
            "role": None,
            "metadata": False,
        }
        page["date"] = self._fetch_time(page["file"])
        return page

    # -- planning ------------------------------------------------------------------------------
    def build(self) -> None:
        rng = self.rng
        n_blog = max(6, self.n_pages // 12)
        n_docs = round((self.n_pages - n_blog) * 0.45)
        n_news = self.n_pages - n_blog - n_docs
        for site, n in (("news", n_news), ("docs", n_docs), ("blog", n_blog)):
            for i in range(n):
                self.pages.append(self._new_page(site, i))
        by_site = {s: [p for p in self.pages if p["site"] == s] for s in ("news", "docs", "blog")}
        self._free = {s: list(ps) for s, ps in by_site.items()}
        for ps in self._free.values():
            rng.shuffle(ps)

        self._plan_specials()
        self._plan_mirrors()
        self._plan_versions()
        self._plan_revisits()
        self._plan_passages()
        self._date_modifications()

    def _date_modifications(self) -> None:
        """HTTP Last-Modified: three days before the fetch, except on pages a planted copy links,
        which are dated by the copies (every copy modified about a day or more after its source), so
        the true source of each copy is the earlier page on the strongest basis a user has. No
        random draw: the rest of the crawl is as it was."""
        for page in self.pages + self.extra:
            page["modified"] = max(0, page["date"] - 86400 * 3)
        edges = [(id(src), id(dst)) for _, src, dst in self.copies]
        nodes = {i: page for _, src, dst in self.copies for i, page in ((id(src), src), (id(dst), dst))}
        depth = dict.fromkeys(nodes, 0)
        for _ in range(len(nodes) + 1):  # longest path from a page no copy comes from
            changed = False
            for a, b in edges:
                if depth[b] < depth[a] + 1:
                    depth[b], changed = depth[a] + 1, True
            if not changed:
                break
        else:
            raise AssertionError("the planted copies form a cycle: no page can be dated first")
        base = min(page["date"] for page in nodes.values()) - 86400 * (max(depth.values(), default=0) + 2)
        for order, (i, page) in enumerate(nodes.items()):
            page["modified"] = base + 86400 * depth[i] + order % 3600

    def _take(self, site: str) -> dict:
        page = self._free[site].pop()
        return page

    def _plan_specials(self) -> None:
        rng, lang = self.rng, self.lang
        # ISO-8859-1, declared only in the HTTP header, accented words
        p = self._take("news")
        lang.accent = True
        p["blocks"] = _news_body(lang, "2003-04-11")
        lang.accent = False
        p.update(charset="iso-8859-1", http_charset=True, meta_charset=None, role="latin1")
        self.special["latin1"] = p["url"]
        self._latin1 = p
        # windows-1252, declared only by <meta charset>: curly quotes and accented words
        p = self._take("docs")
        lang.accent, lang.quotes = True, True
        p["blocks"] = _docs_body(lang)
        lang.accent, lang.quotes = False, False
        p["blocks"].insert(
            1, {"t": "p", "s": [f"The fee is €{rng.randint(5, 90)} per year — payable in advance."], "rs": rng.getrandbits(32)}
        )
        p.update(charset="windows-1252", http_charset=False, meta_charset="windows-1252", role="cp1252")
        self.special["cp1252_meta"] = p["url"]
        # no declaration at all, UTF-8 bytes (with letters outside ISO-8859-1)
        p = self._take("blog")
        p["blocks"] = _blog_body(lang, "2003-04-19")
        for b in p["blocks"]:
            if b["t"] == "p":
                b["s"].append(" ".join(rng.sample(lang.non_latin1, 5)).capitalize() + ".")
        p.update(charset="utf-8", http_charset=False, meta_charset=None, role="undeclared")
        self.special["undeclared_utf8"] = p["url"]
        # non-Latin scripts, on the blog (small template) so the page is mostly non-Latin
        for script, lang_code in (("greek", "el"), ("cyrillic", "ru"), ("cjk", "ja")):
            p = self._take("blog")
            srng = random.Random(f"webwinnow-sample:{self.seed}:{script}")
            p["blocks"] = [{"t": "byline", "text": "2003-04-22"}] + _foreign_body(srng, script)
            p["title"] = _foreign_sentence(srng, script).rstrip(".。")[:40]
            p["lang"] = lang_code
            p["role"] = script
            self.special[script] = p["url"]
            if script == "greek":
                self._greek = p
        # transport encodings: chunked news page, gzip docs page
        p = self._take("news")
        p["transfer"] = "chunked"
        self.special["chunked"] = p["url"]
        self._chunked_page = p
        p = self._take("docs")
        p["transfer"] = "gzip"
        self.special["gzip"] = p["url"]
        self._gzip_page = p

    def _add_extra(self, src: dict, host: str, template: str, path: str, blocks=None, file=None) -> dict:
        url = self._unique(f"http://{host}{path}")
        page = dict(src)
        page.update(
            id=None,
            host=host,
            url=url,
            path=path,
            template=template,
            site=src["site"],
            blocks=_copy_blocks(blocks if blocks is not None else src["blocks"]),
            mirror_of=src["url"],
            transfer=None,
            metadata=False,
            role="mirror",
        )
        if template != src["template"]:
            page.update(charset="utf-8", http_charset=True, meta_charset="utf-8")
        page["file"] = self._other_file(src["file"]) if file is None else file
        page["date"] = self._fetch_time(page["file"])
        self.extra.append(page)
        return page

    def _copy_record(self, kind, src, dst, **extra) -> None:
        rec = {"kind": kind, "src_url": src["url"], "dst_url": dst["url"]}
        rec.update(extra)
        self.copies.append((rec, src, dst))

    def copy_records(self) -> list[dict]:
        """The planted copies, with files and fetch dates as finally assigned."""
        out = []
        for rec, src, dst in self.copies:
            rec = dict(rec)
            rec.update(
                src_file=f"sample-{src['file']:05d}.warc.gz",
                dst_file=f"sample-{dst['file']:05d}.warc.gz",
                src_date=_warc_date(src["date"]),
                dst_date=_warc_date(dst["date"]),
                src_modified=_warc_date(src["modified"]),
                dst_modified=_warc_date(dst["modified"]),
            )
            out.append(rec)
        return out

    def _main_nlen(self, page) -> int:
        return _nlen(_visible(_render_main(page)))

    def _plan_mirrors(self) -> None:
        rng = self.rng
        n = max(4, self.n_pages // 75)
        # exact mirrors: the Greek page, a www. twin with the same template, and mirror/blog reposts
        sources = [self._greek, self._take("news")] + [self._take(rng.choice(["news", "docs"])) for _ in range(n - 2)]
        for k, src in enumerate(sources):
            src["role"] = "mirror_src"
            if k == 1:
                dst = self._add_extra(src, "www." + src["host"], src["template"], src["path"])
                dst["mirror_of"] = src["url"]
            elif k % 2 == 0:
                dst = self._add_extra(src, self.hosts["mirror"], "mirror", f"/{src['host']}{src['path']}")
            else:
                dst = self._add_extra(src, self.hosts["blog"], "blog", f"/reposts/{_slug(src['title'])}.html")
            self._copy_record(
                "mirror_exact", src, dst, text=None, normalized_length=self._main_nlen(src), dst_style=dst["template"]
            )
        for k in range(n):
            src = self._take(rng.choice(["news", "docs"]))
            src["role"] = "mirror_src"
            blocks, edits, overlap = _edit_blocks(self.lang, src["blocks"], 0.1)
            if k % 2 == 0:
                dst = self._add_extra(src, self.hosts["blog"], "blog", f"/reposts/{_slug(src['title'])}-edited.html", blocks)
            else:
                dst = self._add_extra(src, self.hosts["mirror"], "mirror", f"/edited/{src['host']}{src['path']}", blocks)
            self._copy_record(
                "mirror_edited",
                src,
                dst,
                text=None,
                normalized_length=self._main_nlen(src),
                dst_style=dst["template"],
                edited_sentences=edits,
                unchanged_share=overlap,
            )

    def _later(self, page: dict) -> tuple[int, int]:
        """A file and time after ``page``'s fetch (the next file when there is one)."""
        if page["file"] + 1 < self.files:
            f = page["file"] + 1
            return f, self._fetch_time(f)
        start = page["date"] + 3600
        end = (page["file"] + 1) * _FILE_WINDOW - 60
        return page["file"], start + self.rng.randrange(max(1, end - start))

    def _plan_versions(self) -> None:
        rng = self.rng
        for site in ("news", "docs", "news"):
            src = self._take(site)
            src["role"] = "version_src"
            src["date"] = self._fetch_time(src["file"], first_half=True)
            blocks, edits, overlap = _edit_blocks(self.lang, src["blocks"], 0.05)
            blocks.append({"t": "p", "s": ["Update: " + self.lang.sentence()], "rs": rng.getrandbits(32)})
            dst = dict(src)
            dst.update(blocks=blocks, id=None, role="version")
            dst["file"], dst["date"] = self._later(src)
            if site == "docs":
                dst["edited"] = "30 May 2003, at 09:15"
            self.extra.append(dst)
            self._copy_record(
                "version",
                src,
                dst,
                text=None,
                normalized_length=self._main_nlen(src),
                edited_sentences=edits + 1,
                unchanged_share=overlap,
            )

    def _plan_revisits(self) -> None:
        self.revisits = []
        for site in ("docs", "news"):
            src = self._take(site)
            src["role"] = "revisited"
            src["date"] = self._fetch_time(src["file"], first_half=True)
            f, t = self._later(src)
            self.revisits.append({"page": src, "file": f, "date": t})
        self._take("news")["metadata"] = True

    def _plan_passages(self) -> None:
        rng, lang = self.rng, self.lang
        scale = max(1.0, self.n_pages / 300)
        plan = []
        for cls, base in _CLASS_COUNTS.items():
            lo, hi = LENGTH_CLASSES[cls]
            n = max(base, round(base * scale))
            for i in range(n):
                if cls == "short":
                    target = _SHORT_TARGETS[i % len(_SHORT_TARGETS)]
                elif cls == "threshold":
                    target = _THRESHOLD_TARGETS[i % len(_THRESHOLD_TARGETS)]
                elif i == 0:
                    target = lo
                elif i == 1:
                    target = hi
                else:
                    target = rng.randint(lo, hi)
                plan.append((cls, target))
        rng.shuffle(plan)
        n_plan = len(plan)
        # which copies change letter case in the destination
        case_at = {
            i: c for i, c in zip([i for i, (cls, _) in enumerate(plan) if cls in ("threshold", "medium")][:2], ["upper", "lower"])
        }
        # the pool of ordinary pages: every page not already given a role
        pool = [p for s in ("news", "docs", "blog") for p in self._free[s] if p["role"] is None and not p["metadata"]]
        rng.shuffle(pool)
        src_pool = [p for p in pool if p["site"] != "blog"]
        used_src: dict[int, int] = {}
        used_dst: dict[int, int] = {}

        def pick(cands, used, cap):
            cands = [p for p in cands if used.get(p["id"], 0) < cap and p["role"] is None]
            if not cands:
                cands = [p for p in pool if used.get(p["id"], 0) < cap + 2]
            p = rng.choice(cands)
            used[p["id"]] = used.get(p["id"], 0) + 1
            return p

        for i, (cls, target) in enumerate(plan):
            # a few sources and destinations are fixed to exercise charsets and transfer encodings
            if i == 0:
                src = self._latin1
            elif i == 1:
                src = self._gzip_page
                used_src[src["id"]] = 1
            else:
                src = pick(src_pool, used_src, 1)
            if i == 2:
                dst = self._chunked_page
            else:
                r = rng.random()
                if r < 0.12:  # same host
                    cands = [p for p in pool if p["site"] == src["site"] and p is not src]
                elif r < 0.4:
                    cands = [p for p in pool if p["site"] == "blog"]
                else:
                    other = "docs" if src["site"] == "news" else "news"
                    cands = [p for p in pool if p["site"] == other]
                cands = [p for p in cands if p is not src]
                dst = pick(cands, used_dst, 2)
            if src["file"] == dst["file"] and dst is not self._chunked_page and dst["role"] is None:
                dst["file"] = self._other_file(dst["file"])
                dst["date"] = self._fetch_time(dst["file"])

            if i == 0:
                lang.accent = True
            sents = lang.sentences_exact(target)
            lang.accent = False
            paras = self._split_paras(sents, cls)
            text = "\n".join(" ".join(p) for p in paras)
            assert _nlen(text) == target, (target, _nlen(text))

            self._embed_src(src, paras)
            case = case_at.get(i)
            style = self._embed_dst(dst, paras, case)
            self._copy_record(
                "passage", src, dst, text=text, normalized_length=target, length_class=cls, case=case, dst_style=style
            )
        self.n_passages = n_plan

    def _split_paras(self, sents: list[str], cls: str) -> list[list[str]]:
        rng = self.rng
        if cls == "short" or len(sents) == 1 or (cls == "threshold" and rng.random() < 0.7):
            return [sents]
        paras, cur = [], []
        for s in sents:
            cur.append(s)
            if len(cur) >= rng.randint(2, 5):
                paras.append(cur)
                cur = []
        if cur:
            paras.append(cur)
        return paras

    def _embed_src(self, page: dict, paras: list[list[str]]) -> None:
        """Put the passage into ``page`` as whole sentences inside its own paragraph(s)."""
        rng, lang = self.rng, self.lang
        new = [list(p) for p in paras]
        new[0] = [lang.sentence() for _ in range(rng.randint(0, 2))] + new[0]
        new[-1] = new[-1] + [lang.sentence() for _ in range(rng.randint(0, 2))]
        self._groups += 1
        blocks = [{"t": "p", "s": s, "rs": rng.getrandbits(32), "planted": self._groups} for s in new]
        pos = self._insert_pos(page)
        page["blocks"][pos:pos] = blocks

    def _insert_pos(self, page: dict) -> int:
        """A gap between two top-level blocks: never before the first (byline or intro), and
        never inside the paragraphs of an earlier planted passage."""
        blocks = page["blocks"]
        gaps = [
            i
            for i in range(1, len(blocks) + 1)
            if i == len(blocks) or not blocks[i].get("planted") or blocks[i].get("planted") != blocks[i - 1].get("planted")
        ]
        return self.rng.choice(gaps)

    def _embed_dst(self, page: dict, paras: list[list[str]], case: str | None) -> str:
        rng, lang = self.rng, self.lang
        styles = ["blockquote", "div", "br", "li"] + (["inline", "inline"] if len(paras) == 1 else [])
        style = rng.choice(styles)
        if style == "inline":
            sents = [_case(s, case) for s in paras[0]]
            before = [lang.sentence() for _ in range(rng.randint(1, 2))]
            after = [lang.sentence() for _ in range(rng.randint(0, 2))]
            sents = before + sents + after
            block = {"t": "p", "s": sents, "rs": rng.getrandbits(32)}
        else:
            block = {"t": "quote", "paras": paras, "style": style, "case": case, "rs": rng.getrandbits(32)}
        page["blocks"].insert(self._insert_pos(page), block)
        return style

    # -- records -------------------------------------------------------------------------------
    def make_events(self) -> None:
        seq = 0

        def add(ev):
            nonlocal seq
            ev["seq"] = seq
            seq += 1
            self.events.append(ev)

        for page in self.pages + self.extra:
            add({"kind": "page", "page": page, "file": page["file"], "date": page["date"]})
        for rv in self.revisits:
            add({"kind": "revisit", "page": rv["page"], "file": rv["file"], "date": rv["date"]})

        rng = self.rng
        f = lambda k: k % self.files  # noqa: E731
        news, docs = self.hosts["news"], self.hosts["docs"]
        static = [
            (f(0), f"http://{news}/static/site.css", "text/css", _CSS.encode()),
            (f(1), f"http://{news}/static/logo.png", "image/png", _png()),
            (
                f(2),
                f"http://{docs}/files/{_slug(self.sites['docs']['name'])}-manual.pdf",
                "application/pdf",
                _pdf(self.sites["docs"]["name"] + " manual"),
            ),
            (
                f(0),
                f"http://{docs}/api/search?q={self.lang.nouns[3]}",
                "application/json",
                json.dumps(
                    {
                        "query": self.lang.nouns[3],
                        "results": [{"title": p["title"], "url": p["url"]} for p in self.pages if p["site"] == "docs"][:5],
                    },
                    sort_keys=True,
                    ensure_ascii=False,
                ).encode(),
            ),
            (f(1), f"http://{news}/robots.txt", "text/plain", b"User-agent: *\nDisallow: /subscribe\n"),
        ]
        for file, url, ctype, body in static:
            add({"kind": "static", "url": url, "ctype": ctype, "body": body, "file": file, "date": self._fetch_time(file)})
        # a 404 with the site template, and a 301 redirect
        p404 = {
            "site": "news",
            "template": "news",
            "title": "Page not found",
            "path": "/2003/04/no-such-story.html",
            "meta_charset": "utf-8",
            "blocks": [{"t": "p", "s": ["Sorry, the page you asked for does not exist."], "rs": rng.getrandbits(32)}],
        }
        url404 = f"http://{news}{p404['path']}"
        self.special["404"] = url404
        add(
            {
                "kind": "status",
                "url": url404,
                "status": "404 Not Found",
                "file": f(2),
                "date": self._fetch_time(f(2)),
                "body": _render_page(p404, self.sites, _render_main(p404)).encode("utf-8"),
                "location": None,
            }
        )
        target = next(p for p in self.pages if p["site"] == "docs")
        url301 = f"http://{docs}/wiki/Old_Name_{_slug(target['title'])}"
        self.special["301"] = url301
        body301 = (
            "<!DOCTYPE html>\n<html><head><title>301 Moved Permanently</title></head><body>\n"
            f'<h1>Moved Permanently</h1>\n<p>The document has moved <a href="{target["url"]}">here</a>.</p>\n'
            "</body></html>\n"
        )
        add(
            {
                "kind": "status",
                "url": url301,
                "status": "301 Moved Permanently",
                "file": f(1),
                "date": self._fetch_time(f(1)),
                "body": body301.encode("ascii"),
                "location": target["url"],
            }
        )
        self.special["metadata"] = next(p["url"] for p in self.pages if p["metadata"])

    def page_payload(self, page: dict) -> tuple[bytes, bytes, list[tuple[str, str]]]:
        """(html bytes, payload bytes as stored, HTTP headers)."""
        text = _render_page(page, self.sites, _render_main(page))
        body = text.encode(page["charset"])
        ctype = "text/html" + (
            f"; charset={page['charset'].upper() if page['charset'] != 'utf-8' else 'utf-8'}" if page["http_charset"] else ""
        )
        headers = [
            ("Date", _http_date(page["date"])),
            ("Server", "Apache/1.3.27 (Unix)"),
            ("Last-Modified", _http_date(page["modified"])),
            ("Content-Type", ctype),
        ]
        if page["transfer"] == "chunked":
            payload = _chunked(body, random.Random(f"webwinnow-sample:{self.seed}:chunks"))
            headers.append(("Transfer-Encoding", "chunked"))
        elif page["transfer"] == "gzip":
            payload = _gzip(body)
            headers += [("Content-Encoding", "gzip"), ("Vary", "Accept-Encoding"), ("Content-Length", str(len(payload)))]
        else:
            payload = body
            headers.append(("Content-Length", str(len(payload))))
        headers.append(("Connection", "close"))
        return body, payload, headers
