"""HTTP entity bodies as a WARC ``response`` record holds them: undo the codings, then decode the text.

Two jobs, both on bytes that may lie about themselves:

* :func:`decode_body` removes transfer coding (chunked) and content codings (gzip, deflate, br)
  with a hard cap on the decoded size, so a decompression bomb costs at most about the cap.
* :func:`body_to_text` turns the body into ``str`` the way a browser would pick the charset
  (BOM, HTTP header, ``<meta>``), falling back to detection; it never raises.

Failures come back as a ``reason`` (the record is unusable) and oddities as ``flags`` (the record is
usable but something was off); both are short snake_case strings meant to be counted in a table.
"""

from __future__ import annotations

import codecs
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import brotli
import charset_normalizer

__all__ = [
    "BodyResult",
    "TextResult",
    "body_to_text",
    "charset_from_content_type",
    "decode_body",
    "looks_binary",
]

DEFAULT_MAX_DECODED = 32 * 2**20

# Input is fed to the decompressors in slices and output is requested in steps, so neither a large
# body nor a bomb makes one huge allocation; the step also bounds how far past the cap we can go.
_IN_STEP = 64 * 2**10
_OUT_STEP = 2**20


@dataclass(frozen=True)
class BodyResult:
    """``body`` is None exactly when ``reason`` says why the record must be dropped."""

    body: bytes | None
    reason: str | None
    flags: tuple[str, ...]


@dataclass(frozen=True)
class TextResult:
    text: str
    charset: str
    flags: tuple[str, ...]
    #: The body itself where `text` is exactly its strict UTF-8 decoding (no BOM, nothing replaced
    #: or removed): the HTML parser takes these bytes as they are, where encoding `text` again
    #: cost a copy of every page.
    utf8: bytes | None = field(default=None, compare=False, repr=False)


class _DecodeFailed(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Truncated(Exception):
    """The stream ended early; ``partial`` is what it decoded to so far."""

    def __init__(self, partial: bytes) -> None:
        super().__init__("truncated")
        self.partial = partial


# --------------------------------------------------------------------------- codings


def _codings(headers: Iterable[tuple[str, str]], name: str) -> list[str]:
    """Codings listed in every ``name`` header, in the order they were applied."""
    out: list[str] = []
    for key, value in headers:
        if key.strip().lower() == name:
            out.extend(c.strip().lower() for c in value.split(",") if c.strip())
    return out


_IDENTITY = frozenset({"identity", "none"})
_INFLATE = frozenset({"gzip", "x-gzip", "deflate", "x-deflate"})
_BROTLI = frozenset({"br"})


def decode_body(
    raw: bytes,
    headers: list[tuple[str, str]],
    *,
    max_decoded: int = DEFAULT_MAX_DECODED,
    keep_truncated: bool = True,
) -> BodyResult:
    """Undo Transfer-Encoding and Content-Encoding of ``raw`` (the bytes after the HTTP headers).

    The returned body is never longer than ``max_decoded`` (a longer one, encoded or not, gives
    ``decoded_size_limit``). Decoding holds at most about ``max_decoded`` + 1 MiB of output per
    coding, so a bomb stops early; an accepted body is briefly held twice while its pieces are
    joined. ``keep_truncated=False`` turns a compressed stream cut short into
    ``content_decoding_error`` instead of keeping its decoded prefix with ``content_truncated``.
    """
    if max_decoded <= 0:
        raise ValueError(f"max_decoded must be positive, got {max_decoded}; pass a byte count such as 32 * 2**20")
    if not raw:
        return BodyResult(b"", None, ())
    flags: list[str] = []
    # Content codings are applied first and transfer codings on top, each list left to right,
    # so they come off in the reverse of that order.
    layers = _codings(headers, "content-encoding") + _codings(headers, "transfer-encoding")
    body = raw
    try:
        for coding in reversed(layers):
            if coding == "chunked":
                body = _dechunk(body, flags)
            elif coding in _IDENTITY:
                continue
            elif coding in _INFLATE or coding in _BROTLI:
                decoded = _decode_compressed(body, coding, max_decoded, keep_truncated, flags)
                if decoded is None:
                    # Mislabelled: the bytes were never encoded, and nor were any inner layers.
                    break
                body = decoded
            else:
                flags.append("unknown_content_encoding")
                break
    except _DecodeFailed as failure:
        return BodyResult(None, failure.reason, _unique(flags))
    if len(body) > max_decoded:
        return BodyResult(None, "decoded_size_limit", _unique(flags))
    return BodyResult(body, None, _unique(flags))


def _unique(flags: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(flags))


# A chunk-size line: hex size, optional extensions, CRLF (bare LF accepted, as browsers do).
_CHUNK_LINE = re.compile(rb"[ \t]*([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r?\n")


def _dechunk(data: bytes, flags: list[str]) -> bytes:
    match = _CHUNK_LINE.match(data)
    if match is None:
        # Crawlers and proxies often store the de-chunked body but keep the header.
        flags.append("declared_chunked_not_chunked")
        return data
    view = memoryview(data)
    parts: list[memoryview] = []
    end_of_data = len(data)
    pos = 0
    while True:
        match = _CHUNK_LINE.match(data, pos)
        if match is None:
            if pos >= end_of_data:
                flags.append("chunked_unterminated")
                break
            raise _DecodeFailed("bad_chunk_size")
        size = int(match.group(1), 16)
        pos = match.end()
        if size == 0:
            break  # trailers, if any, follow; they are not part of the body
        if pos + size > end_of_data:
            raise _DecodeFailed("bad_chunk_size")
        parts.append(view[pos : pos + size])
        pos += size
        if data.startswith(b"\r\n", pos):
            pos += 2
        elif data.startswith(b"\n", pos):
            pos += 1
        elif pos >= end_of_data:
            flags.append("chunked_unterminated")
            break
        else:
            raise _DecodeFailed("bad_chunk_size")
    return b"".join(parts)


def _decode_compressed(data: bytes, coding: str, cap: int, keep_truncated: bool, flags: list[str]) -> bytes | None:
    """Decoded bytes, or None when ``data`` was plainly never encoded (flagged as mislabelled)."""
    try:
        if coding in _BROTLI:
            return _unbrotli(data, cap)
        try:
            # 32 + 15: zlib or gzip wrapper, whichever the header says ("deflate" is often gzip).
            return _inflate(data, 47, cap)
        except zlib.error:
            if _looks_unencoded(data):
                flags.append("content_encoding_mislabelled")
                return None
            # Old IIS and others send raw deflate without the zlib wrapper.
            return _inflate(data, -15, cap)
    except (zlib.error, brotli.error):
        if _looks_unencoded(data):
            flags.append("content_encoding_mislabelled")
            return None
        raise _DecodeFailed("content_decoding_error") from None
    except _Truncated as cut:
        if keep_truncated and cut.partial:
            flags.append("content_truncated")
            return cut.partial
        raise _DecodeFailed("content_decoding_error") from None


def _slices(view: memoryview) -> Iterator[memoryview]:
    for start in range(0, len(view), _IN_STEP):
        yield view[start : start + _IN_STEP]


class _Sink:
    """Collects decoded pieces and fails as soon as their total passes the cap."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.size = 0
        self.pieces: list[bytes] = []

    def add(self, piece: bytes) -> None:
        if piece:
            self.size += len(piece)
            if self.size > self.cap:
                self.pieces.clear()
                raise _DecodeFailed("decoded_size_limit")
            self.pieces.append(piece)

    def join(self) -> bytes:
        out = b"".join(self.pieces)
        self.pieces.clear()
        return out


_GZIP_MAGIC = b"\x1f\x8b"


def _inflate(data: bytes, wbits: int, cap: int) -> bytes:
    sink = _Sink(cap)
    view = memoryview(data)
    while True:
        d = zlib.decompressobj(wbits)
        pos = 0
        while pos < len(view) and not d.eof:
            piece: bytes | memoryview = view[pos : pos + _IN_STEP]
            pos += len(piece)
            while piece and not d.eof:
                sink.add(d.decompress(piece, _OUT_STEP))
                piece = d.unconsumed_tail
        if not d.eof:
            # All input is in; what zlib still holds is a few symbols' worth, not a bomb's.
            sink.add(d.flush())
            if not d.eof:
                raise _Truncated(sink.join())
        after = d.unused_data + view[pos:]
        # Concatenated gzip members are one valid body (RFC 1952); anything else after the end of
        # the stream is padding some servers append, and is dropped.
        if wbits != -15 and after[:2] == _GZIP_MAGIC:
            view = memoryview(after)
            continue
        return sink.join()


def _unbrotli(data: bytes, cap: int) -> bytes:
    sink = _Sink(cap)
    d = brotli.Decompressor()
    if _BROTLI_HAS_LIMIT:
        for piece in _slices(memoryview(data)):
            sink.add(d.process(piece, output_buffer_limit=_OUT_STEP))
            while not d.can_accept_more_data():
                sink.add(d.process(b"", output_buffer_limit=_OUT_STEP))
    else:
        # Without an output limit one call may expand its whole input; tiny slices keep that small.
        view = memoryview(data)
        for start in range(0, len(view), 256):
            sink.add(d.process(view[start : start + 256]))
    if not d.is_finished():
        raise _Truncated(sink.join())
    return sink.join()


def _brotli_has_limit() -> bool:
    try:
        brotli.Decompressor().process(b"", output_buffer_limit=1)
    except TypeError:
        return False
    except brotli.error:
        return True
    return True


_BROTLI_HAS_LIMIT = _brotli_has_limit()

# Bytes that occur in text: tab, LF, FF, CR, printable ASCII, and everything >= 0x80 (UTF-8 and
# legacy charsets). What is left after deleting these is control bytes.
_TEXT_BYTES = bytes([9, 10, 12, 13, *range(0x20, 0x7F), *range(0x80, 0x100)])
_BOMS_TEXT = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def _looks_unencoded(data: bytes) -> bool:
    """True when ``data`` reads as text, so a coding label on it must be wrong."""
    head = data[:1024].lstrip()
    if head.startswith((b"<", *_BOMS_TEXT)):
        return True
    # Compressed data is close to uniform random: 1 KiB of it without a control byte is a 1e-50 event.
    return bool(head) and not head.translate(None, _TEXT_BYTES)


# --------------------------------------------------------------------------- binary sniffing

_MAGIC = (
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",  # JPEG
    b"GIF87a",
    b"GIF89a",
    b"%PDF-",
    b"PK\x03\x04",  # ZIP, and so docx/xlsx/jar/epub
    b"PK\x05\x06",
    b"PK\x07\x08",
    b"\x1f\x8b",  # gzip
    b"BZh91AY&SY",  # bzip2, with its first block header so text starting "BZh" is not caught
    b"\xfd7zXZ\x00",
    b"7z\xbc\xaf\x27\x1c",
    b"\x28\xb5\x2f\xfd",  # zstd
    b"Rar!\x1a\x07",
    b"\x7fELF",
    b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",  # OLE2: doc, xls, msi
    b"\xca\xfe\xba\xbe",  # Java class, Mach-O fat binary
    b"wOFF",
    b"wOF2",
    b"OggS",
    b"fLaC",
    b"ID3\x02",
    b"ID3\x03",
    b"ID3\x04",
    b"\x1a\x45\xdf\xa3",  # Matroska, WebM
    b"II*\x00",  # TIFF
    b"MM\x00*",
    b"\x00asm",
    b"\x00\x00\x01\x00",  # ICO
)
_SWF = re.compile(rb"[FCZ]WS[\x01-\x30]")
_RIFF = re.compile(rb"RIFF.{4}(?:WEBP|WAVE|AVI )", re.S)
_ISO_MEDIA = re.compile(rb".{4}ftyp", re.S)  # MP4, MOV, HEIC, AVIF


def looks_binary(body: bytes) -> bool:
    """True for a body labelled as text that is really an image, archive, executable or NUL filler."""
    head = body[:1024]
    # Scripts that emit an image after a stray newline are common, so skip leading whitespace.
    start = head.lstrip()[:16]
    if start.startswith(_MAGIC) or _SWF.match(start) or _RIFF.match(start) or _ISO_MEDIA.match(start):
        return True
    if head.startswith(_BOMS_TEXT):
        return False
    controls = len(head.translate(None, _TEXT_BYTES))
    if not controls:
        return False
    even, odd = head[0::2].count(0), head[1::2].count(0)
    if min(even, odd) == 0 and max(even, odd) * 8 > len(head):
        return False  # UTF-16 without a BOM: NUL high bytes of ASCII, all on one side
    return controls * 10 > len(head)


# --------------------------------------------------------------------------- charsets

# WHATWG Encoding Standard labels (what browsers accept), mapped to the Python codec that decodes
# like the browser does. Browsers decode latin-1 and ascii as windows-1252, Shift_JIS as cp932,
# GB2312 as GBK (gb18030 is its superset), EUC-KR as cp949, Big5 as Big5-HKSCS.
_WHATWG_LABELS = {
    "utf-8": "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8",
    "cp866": "866 cp866 csibm866 ibm866",
    "iso8859-2": "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2",
    "iso8859-3": "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 latin3",
    "iso8859-4": "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 latin4",
    "iso8859-5": "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 iso_8859-5:1988",
    "iso8859-6": "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 iso-8859-6-e "
    "iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987",
    "iso8859-7": "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 iso88597 "
    "iso_8859-7 iso_8859-7:1987 sun_eu_greek",
    "iso8859-8": "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 iso88598 "
    "iso_8859-8 iso_8859-8:1988 visual csiso88598i iso-8859-8-i logical",
    "iso8859-10": "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6",
    "iso8859-13": "iso-8859-13 iso8859-13 iso885913",
    "iso8859-14": "iso-8859-14 iso8859-14 iso885914",
    "iso8859-15": "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9",
    "iso8859-16": "iso-8859-16",
    "koi8-r": "cskoi8r koi koi8 koi8-r koi8_r",
    "koi8-u": "koi8-ru koi8-u",
    "mac-roman": "csmacintosh mac macintosh x-mac-roman",
    "cp874": "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874",
    "cp1250": "cp1250 windows-1250 x-cp1250",
    "cp1251": "cp1251 windows-1251 x-cp1251",
    # The standard gives x-user-defined its own private-use mapping; as text that is useless, and
    # pages that claim it are windows-1252 in practice.
    "cp1252": "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 iso88591 "
    "iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252 x-user-defined",
    "cp1253": "cp1253 windows-1253 x-cp1253",
    "cp1254": "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 iso_8859-9:1989 l5 "
    "latin5 windows-1254 x-cp1254",
    "cp1255": "cp1255 windows-1255 x-cp1255",
    "cp1256": "cp1256 windows-1256 x-cp1256",
    "cp1257": "cp1257 windows-1257 x-cp1257",
    "cp1258": "cp1258 windows-1258 x-cp1258",
    "mac-cyrillic": "x-mac-cyrillic x-mac-ukrainian",
    "gb18030": "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk gb18030",
    "big5hkscs": "big5 big5-hkscs cn-big5 csbig5 x-x-big5",
    "euc_jp": "cseucpkdfmtjapanese euc-jp x-euc-jp",
    "iso2022_jp": "csiso2022jp iso-2022-jp",
    "cp932": "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis",
    "cp949": "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601 ksc_5601 windows-949",
    "utf-16-be": "unicodefffe utf-16be",
    "utf-16-le": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le",
}
_LABEL_TO_CODEC = {label: codec for codec, labels in _WHATWG_LABELS.items() for label in labels.split()}

# Python names (after codecs.lookup) outside the browser table that browsers would decode differently.
_PY_CODEC_OVERRIDE = {
    "iso8859-1": "cp1252",
    "ascii": "cp1252",
    "iso8859-9": "cp1254",
    "iso8859-11": "cp874",
    "tis-620": "cp874",
    "shift_jis": "cp932",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "euc_kr": "cp949",
    "big5": "big5hkscs",
    "utf-16": "utf-16-le",
    "utf-8-sig": "utf-8",
}
# Text codecs Python knows that no browser honours: they turn markup into other markup (utf-7 is a
# classic XSS vector) or are not charsets at all.
_REFUSED = frozenset({"utf-7", "unicode-escape", "raw-unicode-escape", "idna", "punycode", "undefined"})


def _resolve_charset(label: str | None) -> str | None:
    """The Python codec for a charset label, or None when no browser would accept it either."""
    if not label:
        return None
    key = label.strip().strip("\"'").strip().lower()
    if key in _LABEL_TO_CODEC:
        return _LABEL_TO_CODEC[key]
    try:
        info = codecs.lookup(key)
    except (LookupError, ValueError):
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in _REFUSED:
        return None
    return _PY_CODEC_OVERRIDE.get(info.name, info.name)


def charset_from_content_type(value: str | None) -> str | None:
    """The charset parameter of a Content-Type value, lower-cased and unquoted, or None."""
    if not value:
        return None
    for param in value.split(";")[1:]:
        name, sep, val = param.partition("=")
        if sep and name.strip().lower() == "charset":
            # Repeated headers get joined with ", " by some tools; the first value is the one sent.
            val = val.strip().split(",")[0].strip().strip("\"'").strip().lower()
            return val or None
    return None


# windows-1252 as browsers decode it: the five bytes Python leaves undefined map to C1 controls,
# so this decoder accepts every byte string.
_CP1252_TABLE = "".join(bytes([b]).decode("cp1252", errors="ignore") or chr(b) for b in range(256))


def _decode(body: bytes, codec: str) -> str | None:
    """``body`` decoded strictly with ``codec``, or None if it does not decode."""
    try:
        if codec == "cp1252":
            return codecs.charmap_decode(body, "strict", _CP1252_TABLE)[0]
        return body.decode(codec)
    except (UnicodeError, LookupError, ValueError, TypeError):
        return None


def _decode_mostly_utf8(body: bytes) -> str | None:
    """UTF-8 with U+FFFD for the few bad bytes when the rest is clearly UTF-8, else None.

    Records cut at a size limit end in half a character, and many pages carry a stray byte or two;
    falling back to a legacy charset would garble every other non-ASCII character on the page.
    """
    text = body.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    # Each valid multi-byte character makes the text at least one code point shorter than the bytes.
    multibyte = len(body) - len(text)
    return text if multibyte >= 4 * bad else None


_META_CHARSET = re.compile(rb"""<meta\b[^>]*?charset\s*=\s*["']?\s*([a-z0-9._:+-]{1,40})""", re.IGNORECASE)
_META_SCAN = 4096


def _meta_charset(body: bytes) -> str | None:
    match = _META_CHARSET.search(body, 0, _META_SCAN)
    return match.group(1).decode("ascii").lower() if match else None


_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
_DETECT_BYTES = 64 * 2**10


def body_to_text(body: bytes, http_charset: str | None) -> TextResult:
    """Decode an HTML body: BOM, HTTP charset, ``<meta>`` charset, UTF-8, detection, windows-1252.

    A label that names no known charset is skipped (``charset_label_invalid``), as is one under
    which the bytes do not decode, or that is contradicted by bytes that are valid UTF-8 with
    non-ASCII characters (``charset_declared_wrong``). Never raises.
    """
    flags: list[str] = []
    text, charset = _choose_and_decode(body, http_charset, flags)
    # In UTF-8 the byte 0 is U+0000 and nothing else is: the bytes are searched with memchr,
    # where a str of wide characters is searched a character at a time (over the docs corpus's
    # pages, nearly all with some non-ASCII character: 0.03 against 0.21 CPU-s).
    if b"\x00" in body if charset == "utf-8" else "\x00" in text:
        text = text.replace("\x00", "")
        flags.append("nul_removed")
    # utf-8 is chosen by a strict decode, unless a BOM was cut off or bytes were replaced
    changed = "charset_replaced" in flags or "nul_removed" in flags or body.startswith(codecs.BOM_UTF8)
    exact = charset == "utf-8" and not changed
    return TextResult(text, charset, _unique(flags), body if exact else None)


def _choose_and_decode(body: bytes, http_charset: str | None, flags: list[str]) -> tuple[str, str]:
    if not body:
        return "", "utf-8"
    for bom, codec in _BOMS:
        if body.startswith(bom):
            text = _decode(body[len(bom) :], codec)
            if text is None:
                text = body[len(bom) :].decode(codec, errors="replace")
                flags.append("charset_replaced")
            return text, codec

    tried: set[str] = set()
    candidates: tuple[tuple[str | None, bool], ...] = ((http_charset, False), (None, True))
    for label, from_meta in candidates:
        if from_meta:
            label = _meta_charset(body)
        if not label:
            continue
        resolved = _resolve_charset(label)
        if resolved is None:
            flags.append("charset_label_invalid")
            continue
        codec = resolved
        if from_meta and codec.startswith("utf-16"):
            codec = "utf-8"  # an ASCII-readable <meta> cannot be UTF-16, so the label is wrong
        if codec in tried:
            continue
        tried.add(codec)
        text = _decode(body, codec)
        if text is None and codec == "utf-8":
            text = _decode_mostly_utf8(body)
            if text is not None:
                flags.append("charset_replaced")
                return text, codec
        if text is None:
            flags.append("charset_declared_wrong")
            continue
        if codec != "utf-8" and not body.isascii():
            # Legacy-charset bytes almost never form valid multi-byte UTF-8 by chance, while
            # servers that say latin-1 and send UTF-8 are everywhere.
            utf8 = _decode(body, "utf-8")
            if utf8 is not None:
                flags.append("charset_declared_wrong")
                return utf8, "utf-8"
        return text, codec

    if "utf-8" not in tried:
        text = _decode(body, "utf-8")
        if text is None:
            text = _decode_mostly_utf8(body)
            if text is not None:
                flags.append("charset_replaced")
        if text is not None:
            return text, "utf-8"

    detected = _detect(body[:_DETECT_BYTES])
    if detected is not None and detected not in tried and detected != "utf-8":
        text = _decode(body, detected)
        if text is not None:
            flags.append("charset_detected")
            return text, detected

    # Browsers' default for unlabelled Western pages; it maps every byte, so this cannot fail.
    text = _decode(body, "cp1252")
    if text is not None:
        return text, "cp1252"
    flags.append("charset_replaced")
    return body.decode("utf-8", errors="replace"), "utf-8"


def _detect(head: bytes) -> str | None:
    try:
        matches = charset_normalizer.from_bytes(head)
    except Exception:  # a detector bug must not cost the document; the fallback still decodes it
        return None
    best = matches.best()
    if best is None:
        return None
    # On short or mostly-ASCII Western text the detector's pick among near-equal single-byte
    # code pages is close to arbitrary (cp1257, cp1250 for French); windows-1252 is by far the most
    # common of them on the web, so it wins whenever it reads the bytes about as cleanly.
    for match in matches:
        if "cp1252" in match.could_be_from_charset and match.chaos <= best.chaos + _CHAOS_SLACK:
            return "cp1252"
    return _resolve_charset(best.encoding)


_CHAOS_SLACK = 0.1
