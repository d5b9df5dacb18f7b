"""Non-HTML payloads, transfer codings and dates for the sample's records."""

from __future__ import annotations

import base64
import gzip
import hashlib
import random
import struct
import zlib
from datetime import UTC, timedelta

from .constants import _BASE_TIME


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    w = h = 4  # a 4x4 RGB gradient
    rows = b"".join(b"\x00" + b"".join(bytes([(x * 60) % 256, (y * 60) % 256, 128]) for x in range(w)) for y in range(h))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def _pdf(title: str) -> bytes:
    text = f"BT /F1 12 Tf 72 720 Td ({title}) Tj ET".encode("ascii")
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(text)).encode() + b" >>\nstream\n" + text + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"
    offsets = []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + obj + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def _chunked(body: bytes, rng: random.Random) -> bytes:
    out = b""
    pos = 0
    while pos < len(body):
        n = rng.randint(700, 2600)
        part = body[pos : pos + n]
        out += f"{len(part):x}\r\n".encode() + part + b"\r\n"
        pos += n
    return out + b"0\r\n\r\n"


def _gzip(body: bytes) -> bytes:
    return gzip.compress(body, compresslevel=6, mtime=0)


def _sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def _warc_date(secs: int) -> str:
    return (_BASE_TIME + timedelta(seconds=secs)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _http_date(secs: int) -> str:
    return (_BASE_TIME + timedelta(seconds=secs)).replace(tzinfo=UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")


# --------------------------------------------------------------------------------------------
# the crawl
