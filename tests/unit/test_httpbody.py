"""HTTP body decoding: de-chunking, content codings with a size cap, charsets, binary sniffing."""

from __future__ import annotations

import codecs
import gzip
import hashlib
import json
import os
import tracemalloc
import zlib

import brotli
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webwinnow.crawl.httpbody import (
    BodyResult,
    TextResult,
    body_to_text,
    charset_from_content_type,
    decode_body,
    looks_binary,
)

from paths import SHARED

BADWARC = SHARED / "data" / "badwarc"

HTML = b"<!DOCTYPE html><html><head><title>t</title></head><body><p>Hello, winnowing world.</p></body></html>"


def chunk(data: bytes, size: int, ext: bytes = b"", trailer: bytes = b"") -> bytes:
    pieces = [b"%x%s\r\n%s\r\n" % (len(data[i : i + size]), ext, data[i : i + size]) for i in range(0, len(data), size)]
    return b"".join(pieces) + b"0\r\n" + trailer + b"\r\n"


def raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def ok(result: BodyResult, body: bytes, flags: tuple[str, ...] = ()) -> None:
    assert result == BodyResult(body, None, flags)


# --------------------------------------------------------------------------- chunked


def test_plain_body_passes_through() -> None:
    ok(decode_body(HTML, [("Content-Type", "text/html")]), HTML)


def test_empty_body_is_empty_whatever_the_headers() -> None:
    ok(decode_body(b"", [("Transfer-Encoding", "chunked"), ("Content-Encoding", "gzip")]), b"")


def test_chunked() -> None:
    ok(decode_body(chunk(HTML, 7), [("Transfer-Encoding", "chunked")]), HTML)


def test_chunked_header_is_case_insensitive_and_may_be_a_list() -> None:
    raw = chunk(gzip.compress(HTML), 16)
    ok(decode_body(raw, [("transfer-encoding", "GZIP, Chunked")]), HTML)


def test_chunk_extensions_and_trailers() -> None:
    raw = chunk(HTML, 10, ext=b';name="v";x=1', trailer=b"X-Trailer: yes\r\nX-Other: 2\r\n")
    ok(decode_body(raw, [("Transfer-Encoding", "chunked")]), HTML)


def test_chunked_with_bare_lf_line_ends() -> None:
    raw = chunk(HTML, 9).replace(b"\r\n", b"\n")
    ok(decode_body(raw, [("Transfer-Encoding", "chunked")]), HTML.replace(b"\r\n", b"\n"))


def test_declared_chunked_but_not_chunked_falls_back_to_raw() -> None:
    ok(decode_body(HTML, [("Transfer-Encoding", "chunked")]), HTML, ("declared_chunked_not_chunked",))


def test_bad_chunk_size_in_the_middle() -> None:
    raw = b"5\r\nHello\r\nzz\r\nworld\r\n0\r\n\r\n"
    assert decode_body(raw, [("Transfer-Encoding", "chunked")]) == BodyResult(None, "bad_chunk_size", ())


def test_chunk_larger_than_the_data_is_bad_chunk_size() -> None:
    raw = b"%x\r\n%s\r\n0\r\n\r\n" % (len(HTML) + 500, HTML)
    assert decode_body(raw, [("Transfer-Encoding", "chunked")]).reason == "bad_chunk_size"


def test_missing_crlf_after_chunk_data_is_bad_chunk_size() -> None:
    raw = b"5\r\nHelloXX5\r\nworld\r\n0\r\n\r\n"
    assert decode_body(raw, [("Transfer-Encoding", "chunked")]).reason == "bad_chunk_size"


def test_unterminated_chunked_keeps_complete_chunks() -> None:
    raw = chunk(HTML, 10)[: -len(b"0\r\n\r\n")]
    ok(decode_body(raw, [("Transfer-Encoding", "chunked")]), HTML, ("chunked_unterminated",))


# --------------------------------------------------------------------------- content codings


@pytest.mark.parametrize(
    ("coding", "encode"),
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", raw_deflate),
        ("br", brotli.compress),
        ("identity", lambda b: b),
    ],
    ids=["gzip", "x-gzip", "deflate-zlib", "deflate-raw", "br", "identity"],
)
def test_content_codings(coding: str, encode) -> None:
    ok(decode_body(encode(HTML), [("Content-Encoding", coding)]), HTML)


def test_stacked_codings_come_off_in_reverse_order() -> None:
    raw = brotli.compress(zlib.compress(gzip.compress(HTML)))
    ok(decode_body(raw, [("Content-Encoding", "gzip, deflate"), ("Content-Encoding", "br")]), HTML)


def test_chunked_on_top_of_gzip() -> None:
    raw = chunk(gzip.compress(HTML), 64)
    ok(decode_body(raw, [("Transfer-Encoding", "chunked"), ("Content-Encoding", "gzip")]), HTML)


def test_concatenated_gzip_members_are_one_body() -> None:
    ok(decode_body(gzip.compress(HTML) + gzip.compress(HTML), [("Content-Encoding", "gzip")]), HTML + HTML)


def test_padding_after_the_gzip_stream_is_dropped() -> None:
    ok(decode_body(gzip.compress(HTML) + b"\0" * 10, [("Content-Encoding", "gzip")]), HTML)


def test_gzip_label_on_plain_html_is_mislabelled() -> None:
    ok(decode_body(HTML, [("Content-Encoding", "gzip")]), HTML, ("content_encoding_mislabelled",))


def test_br_label_on_plain_text_is_mislabelled() -> None:
    text = b"Just some text, no markup at all. " * 10
    ok(decode_body(text, [("Content-Encoding", "br")]), text, ("content_encoding_mislabelled",))


def test_unknown_coding_keeps_the_raw_body() -> None:
    ok(decode_body(HTML, [("Content-Encoding", "zstd")]), HTML, ("unknown_content_encoding",))


def test_undecodable_binary_is_a_decoding_error() -> None:
    junk = bytes(range(256)) * 8
    for coding in ("gzip", "deflate", "br"):
        assert decode_body(junk, [("Content-Encoding", coding)]) == BodyResult(None, "content_decoding_error", ())


def test_truncated_gzip_keeps_its_prefix_with_a_flag() -> None:
    page = HTML * 200
    raw = gzip.compress(page)[: len(gzip.compress(page)) // 2]
    result = decode_body(raw, [("Content-Encoding", "gzip")])
    assert result.reason is None and result.flags == ("content_truncated",)
    assert result.body and page.startswith(result.body)
    strict = decode_body(raw, [("Content-Encoding", "gzip")], keep_truncated=False)
    assert strict == BodyResult(None, "content_decoding_error", ())


def test_truncated_gzip_with_no_output_is_a_decoding_error() -> None:
    assert decode_body(gzip.compress(HTML)[:5], [("Content-Encoding", "gzip")]).reason == "content_decoding_error"


def test_truncated_brotli_keeps_its_prefix() -> None:
    page = os.urandom(3000).hex().encode()
    result = decode_body(brotli.compress(page)[:-40], [("Content-Encoding", "br")])
    assert result.flags == ("content_truncated",) and result.body and page.startswith(result.body)


def test_size_cap_is_inclusive() -> None:
    body = b"x" * 1000
    ok(decode_body(gzip.compress(body), [("Content-Encoding", "gzip")], max_decoded=1000), body)
    limited = decode_body(gzip.compress(body + b"x"), [("Content-Encoding", "gzip")], max_decoded=1000)
    assert limited == BodyResult(None, "decoded_size_limit", ())


def test_plain_body_above_the_cap_is_refused_too() -> None:
    assert decode_body(b"x" * 1001, [], max_decoded=1000).reason == "decoded_size_limit"


def test_max_decoded_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_decoded"):
        decode_body(HTML, [], max_decoded=0)


def _zeros_gzip(size: int) -> bytes:
    c = zlib.compressobj(1, zlib.DEFLATED, 31)
    block = bytes(2**20)
    return b"".join(c.compress(block) for _ in range(size // 2**20)) + c.flush()


def _zeros_brotli(size: int) -> bytes:
    c = brotli.Compressor(quality=1)
    block = bytes(2**20)
    return b"".join(c.process(block) for _ in range(size // 2**20)) + c.finish()


@pytest.mark.parametrize(("coding", "make"), [("gzip", _zeros_gzip), ("br", _zeros_brotli)])
def test_decompression_bomb_is_stopped_with_bounded_memory(coding: str, make) -> None:
    bomb = make(200 * 2**20)
    assert len(bomb) < 2**20
    max_decoded = 32 * 2**20
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = decode_body(bomb, [("Content-Encoding", coding)], max_decoded=max_decoded)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert result == BodyResult(None, "decoded_size_limit", ())
    assert peak < max_decoded + 64 * 2**20, f"peak {peak / 2**20:.0f} MiB"


# --------------------------------------------------------------------------- charsets


@pytest.mark.parametrize(
    ("value", "charset"),
    [
        ("text/html; charset=UTF-8", "utf-8"),
        ('text/html;charset="iso-8859-1"', "iso-8859-1"),
        ("text/html; Charset = 'Shift_JIS' ; q=1", "shift_jis"),
        ("text/html; charset=utf-8, text/html", "utf-8"),
        ("text/html", None),
        ("text/html; charset=", None),
        ("", None),
        (None, None),
    ],
)
def test_charset_from_content_type(value: str | None, charset: str | None) -> None:
    assert charset_from_content_type(value) == charset


def page(text: str, meta: str = "") -> str:
    return f"<html><head>{meta}<title>t</title></head><body><p>{text}</p></body></html>"


def test_header_latin1_decodes_as_windows_1252() -> None:
    result = body_to_text(page("caf\u00e9 \u20ac").encode("cp1252"), "iso-8859-1")
    assert result == TextResult(page("caf\u00e9 \u20ac"), "cp1252", ())


def test_meta_charset_when_the_header_has_none() -> None:
    html = page("na\u00efve \u2014 caf\u00e9", '<meta charset="windows-1252">')
    assert body_to_text(html.encode("cp1252"), None) == TextResult(html, "cp1252", ())


def test_meta_http_equiv_charset() -> None:
    html = page("\u041f\u0440\u0438\u0432\u0435\u0442", '<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">')
    assert body_to_text(html.encode("koi8-r"), None) == TextResult(html, "koi8-r", ())


def test_no_declaration_utf8() -> None:
    html = page("\u00fcber stra\u00dfe \u65e5\u672c")
    assert body_to_text(html.encode(), None) == TextResult(html, "utf-8", ())


def test_unknown_label_is_skipped() -> None:
    html = page("caf\u00e9")
    assert body_to_text(html.encode(), "foo-bar") == TextResult(html, "utf-8", ("charset_label_invalid",))


def test_utf7_is_refused_like_browsers_do() -> None:
    html = page("+ADw-script+AD4-")
    assert body_to_text(html.encode(), "utf-7") == TextResult(html, "utf-8", ("charset_label_invalid",))


def test_declared_utf8_but_cp1252_bytes() -> None:
    html = page("Un caf\u00e9 na\u00eff co\u00fbte 5 \u20ac \u2014 d\u00e9j\u00e0 vu, gar\u00e7on.")
    result = body_to_text(html.encode("cp1252"), "utf-8")
    assert result.text == html and result.charset == "cp1252"
    assert "charset_declared_wrong" in result.flags


def test_declared_latin1_but_utf8_bytes() -> None:
    html = page("\u00fcber stra\u00dfe")
    assert body_to_text(html.encode(), "iso-8859-1") == TextResult(html, "utf-8", ("charset_declared_wrong",))


@pytest.mark.parametrize(("bom", "codec"), [(b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")])
def test_bom_wins_over_labels(bom: bytes, codec: str) -> None:
    html = page("\u00fcber \u65e5\u672c")
    assert body_to_text(bom + html.encode(codec), "iso-8859-1") == TextResult(html, codec, ())


JAPANESE = "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3067\u3059\u3002\u3053\u3093\u306b\u3061\u306f\u4e16\u754c\u3002"
CHINESE = "\u8fd9\u662f\u4e2d\u6587\u6587\u672c\u3002\u4f60\u597d\u4e16\u754c\uff0c\u4eca\u5929\u5929\u6c14\u5f88\u597d\u3002"


@pytest.mark.parametrize(
    ("text", "codec", "label"),
    [(JAPANESE, "shift_jis", "Shift_JIS"), (JAPANESE, "shift_jis", "x-sjis"), (CHINESE, "gb2312", "GB2312")],
)
def test_declared_cjk(text: str, codec: str, label: str) -> None:
    html = page(text)
    assert body_to_text(html.encode(codec), label).text == html


@pytest.mark.parametrize(("text", "codec"), [(JAPANESE, "shift_jis"), (CHINESE, "gb2312")])
def test_undeclared_cjk_is_detected(text: str, codec: str) -> None:
    html = page(text * 3)
    result = body_to_text(html.encode(codec), None)
    assert result.text == html and result.flags == ("charset_detected",)


def test_shift_jis_label_decodes_windows_extensions() -> None:
    # NEC circled digits: in cp932, which browsers use for Shift_JIS, but not in strict Shift_JIS.
    html = page("\u2460\u2461 " + JAPANESE)
    assert body_to_text(html.encode("cp932"), "shift_jis").text == html


@pytest.mark.parametrize(
    ("label", "codec"),
    [("unicode-1-1-utf-8", "utf-8"), ("x-user-defined", "cp1252"), ("latin1", "cp1252"), ("ascii", "cp1252")],
)
def test_whatwg_aliases(label: str, codec: str) -> None:
    assert body_to_text(page("plain").encode(), label).charset == codec


def test_windows_1252_decodes_every_byte() -> None:
    result = body_to_text(b"<p>\x81\x8d\x8f\x90\x9d caf\xe9</p>", "windows-1252")
    assert result == TextResult("<p>\x81\x8d\x8f\x90\x9d caf\u00e9</p>", "cp1252", ())


def test_utf8_cut_mid_character_stays_utf8() -> None:
    html = page("\u00fcber stra\u00dfe \u65e5\u672c " * 20).encode()
    cut = html[: html.index("\u672c".encode()) + 1]
    result = body_to_text(cut, None)
    assert result.charset == "utf-8" and result.flags == ("charset_replaced",)
    assert result.text.endswith("\ufffd") and "\u00fcber stra\u00dfe" in result.text


def test_nul_characters_are_removed() -> None:
    assert body_to_text(b"<p>a\x00b</p>", "utf-8") == TextResult("<p>ab</p>", "utf-8", ("nul_removed",))
    # wide characters, a byte UTF-8 replaces, a cut-off BOM: the NUL is still found and removed
    wide = body_to_text("<p>\u65e5\x00\u00fc</p>".encode(), None)
    assert wide.text == "<p>\u65e5\u00fc</p>" and wide.flags == ("nul_removed",)
    replaced = body_to_text(("<p>" + "\u00fcber " * 20 + "\x00").encode() + b"\xff</p>", None)
    assert replaced.charset == "utf-8" and "\x00" not in replaced.text and "nul_removed" in replaced.flags
    assert body_to_text(codecs.BOM_UTF8 + b"<p>a\x00b</p>", None).flags == ("nul_removed",)
    # UTF-16's zero bytes are halves of characters, not NULs
    utf16 = body_to_text(codecs.BOM_UTF16_LE + "<p>ab</p>".encode("utf-16-le"), None)
    assert utf16.text == "<p>ab</p>" and "nul_removed" not in utf16.flags
    assert "nul_removed" in body_to_text(codecs.BOM_UTF16_LE + "<p>a\x00b</p>".encode("utf-16-le"), None).flags


def test_empty_body() -> None:
    assert body_to_text(b"", "utf-8") == TextResult("", "utf-8", ())


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.sampled_from([None, "utf-8", "iso-8859-1", "shift_jis", "utf-16", "bogus", ""]))
def test_body_to_text_never_raises(body: bytes, label: str | None) -> None:
    result = body_to_text(body, label)
    assert isinstance(result.text, str) and "\x00" not in result.text
    if result.utf8 is not None:  # the bytes the parser takes instead: exactly the text's
        assert result.utf8 is body and body.decode("utf-8") == result.text


# --------------------------------------------------------------------------- binary sniffing


@pytest.mark.parametrize(
    "body",
    [
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
        b"\xff\xd8\xff\xe0\0\x10JFIF",
        b"GIF89a\x01\0\x01\0",
        b"%PDF-1.7\n%\xe2\xe3\xcf\xd3",
        b"PK\x03\x04\x14\0\0\0",
        gzip.compress(HTML),
        b"\r\n\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
        bytes(65536),
        bytes(range(256)) * 4,
    ],
    ids=["png", "jpeg", "gif", "pdf", "zip", "gzip", "png-after-newline", "nul", "controls"],
)
def test_binary_payloads(body: bytes) -> None:
    assert looks_binary(body)


@pytest.mark.parametrize(
    "body",
    [
        HTML,
        b"",
        "<p>caf\u00e9 \u65e5\u672c</p>".encode(),
        b"\xff\xfe" + "<html><body>hi</body></html>".encode("utf-16-le"),
        "<html><body>no bom</body></html>".encode("utf-16-le"),
        "<p>caf\u00e9</p>".encode("cp1252"),
        b"<p>one stray\x01 control</p>" + b" " * 100,
    ],
    ids=["html", "empty", "utf8", "utf16-bom", "utf16-no-bom", "cp1252", "stray-control"],
)
def test_text_payloads(body: bytes) -> None:
    assert not looks_binary(body)


# --------------------------------------------------------------------------- shared fixtures


def _badwarc_records(name: str):
    """(expected entry, raw body, HTTP headers) for each response record of a badwarc file."""
    from warcio.archiveiterator import ArchiveIterator

    manifest = json.loads((BADWARC / "expected_results.json").read_text())
    entry = next(f for f in manifest["files"] if f["file"] == name)
    expected = {r["uri"]: r for r in entry["records"] if r["uri"]}
    with open(BADWARC / "files" / name, "rb") as stream:
        for record in ArchiveIterator(stream):
            if record.rec_type == "response":
                uri = record.rec_headers.get_header("WARC-Target-URI")
                yield expected[uri], record.raw_stream.read(), record.http_headers.headers


BADWARC_FILES = [
    "f11_chunked_plus_gzip.warc.gz",
    "f12_chunk_extensions_trailer.warc.gz",
    "f13_chunked_broken.warc.gz",
    "f14_content_encoding_gzip_br_deflate.warc.gz",
    "f15_content_encoding_mislabelled.warc.gz",
    "f16_charset_mess.warc.gz",
    "f17_binary_labelled_html.warc.gz",
    "f19_decompression_bomb_1GiB.warc.gz",
]


@pytest.mark.parametrize("name", BADWARC_FILES)
def test_badwarc_bodies(name: str) -> None:
    if not (BADWARC / "files" / name).exists():
        pytest.skip(f"{BADWARC / 'files' / name} is absent: lay out the shared/ folder beside the repo to run this")
    for expected, raw, headers in _badwarc_records(name):
        result = decode_body(raw, headers)
        reason = expected.get("reason")
        if reason in ("bad_chunk_size", "decoded_size_limit"):
            assert result.reason == reason, expected["uri"]
        elif reason == "content_decoding_error":
            # A gzip body cut in half: kept with a flag by default, a failure when asked.
            assert result.flags == ("content_truncated",)
            assert decode_body(raw, headers, keep_truncated=False).reason == reason
        elif reason == "binary_payload":
            assert result.body is not None and looks_binary(result.body), expected["uri"]
        else:
            assert result.body is not None, (expected["uri"], result)
            assert hashlib.sha256(result.body).hexdigest() == expected["body_sha256"], expected["uri"]
            if reason == "declared_chunked_not_chunked":
                assert result.flags == (reason,)
            assert not looks_binary(result.body)
            content_type = next((v for k, v in headers if k.lower() == "content-type"), None)
            text = body_to_text(result.body, charset_from_content_type(content_type)).text
            assert expected["marker"] in text
            extra = expected["marker"] and _expected_extra(expected)
            if extra:
                assert extra in text, expected["uri"]


def _expected_extra(expected: dict) -> str | None:
    """The non-ASCII sample text f16 puts in each page, by its note."""
    return {
        "utf-8 label, cp1252 bytes": " caf\u00e9 na\u00efve \u2014 \u20ac5",
        "no label, meta windows-1251": " \u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440",
        "utf-16le with BOM, no label": " \u00fcber \u65e5\u672c",
        "latin-1 label, utf-8 bytes": " \u00fcber stra\u00dfe",
        "clean utf-8 control": " \u00e9t\u00e9 \u2713",
    }.get(expected.get("note", ""))


@pytest.mark.parametrize(
    "value, expected",
    [
        ("Sun, 06 Nov 1994 08:49:37 GMT", "1994-11-06T08:49:37Z"),  # IMF-fixdate
        ("Sunday, 06-Nov-94 08:49:37 GMT", "1994-11-06T08:49:37Z"),  # RFC 850
        ("Sun Nov  6 08:49:37 1994", "1994-11-06T08:49:37Z"),  # asctime: no zone, GMT
        ("Sun, 06 Nov 1994 10:49:37 +0200", "1994-11-06T08:49:37Z"),  # an offset, to UTC
        ("yesterday", None),
        ("", None),
        (None, None),
        ("Sun, 99 Nov 1994 08:49:37 GMT", None),
    ],
)
def test_http_dates_become_comparable_utc_strings(value, expected):
    from webwinnow.crawl.records import http_time

    assert http_time(value) == expected


@pytest.mark.parametrize(
    ("body", "charset", "exact"),
    [
        (b"<p>plain ascii</p>", None, True),
        ("<p>naïve café, 東京</p>".encode(), "utf-8", True),
        ("<p>naïve café</p>".encode(), "iso-8859-1", True),  # declared wrong: UTF-8 all the same
        (b"\xef\xbb\xbf<p>with a BOM</p>", None, False),
        ("<p>café</p>".encode("cp1252"), "windows-1252", False),
        ("<p>naïve café, 東京, übel</p>".encode() + b"\xff", "utf-8", False),  # a byte replaced
        (b"<p>a NUL\x00 inside</p>", None, False),
        ("<p>Grüße</p>".encode("utf-16"), None, False),
    ],
)
def test_a_body_the_parser_may_take_as_it_is(body, charset, exact) -> None:
    """TextResult.utf8 is the body itself exactly where the text is its strict UTF-8 decoding, so
    the parser gets the same bytes as from the text encoded again; else None."""
    from webwinnow.text.html2text import html_to_text

    got = body_to_text(body, charset)
    assert (got.utf8 is not None) == exact
    if exact:
        assert got.utf8 is body and got.utf8 == got.text.encode("utf-8")
        assert html_to_text(got.utf8) == html_to_text(got.text)


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["Mon", "Sun", "Sat", "Tue"]),
    st.integers(0, 39),
    st.sampled_from(["Jan", "Feb", "Jun", "Sep", "Nov", "Dec", "jan", "Foo"]),
    st.integers(0, 9999),
    st.integers(0, 29),
    st.integers(0, 69),
    st.integers(0, 69),
    st.sampled_from(["GMT", "UTC", "+0200", "gmt"]),
    st.sampled_from(["", " ", "\t"]),
)
def test_the_fixdate_fast_path_reads_what_email_utils_reads(wday, day, month, year, hour, minute, second, zone, pad):
    """http_time reads IMF-fixdate itself; on every such string, and near misses, it gives what
    email.utils' parser gives (the path for every other form)."""
    from webwinnow.crawl.records import _parsed_http_time, http_time

    value = f"{pad}{wday}, {day:02d} {month} {year:04d} {hour:02d}:{minute:02d}:{second:02d} {zone}{pad}"
    assert http_time(value) == _parsed_http_time(value.strip())
