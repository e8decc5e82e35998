"""A product's price label, twice: SVG (its text, for people and printers) and PNG (pixels, for the
image block that model APIs accept), the PNG drawn with the standard library alone.

The font is misc-fixed 9x18 (X.Org, public domain: "Public domain font. Share and enjoy."), 8 pixels
wide as Debian's console-setup ships it (``Lat15-Fixed18.psf.gz``): printable ASCII, Latin-1, the
letters Latin-9 adds, and typographic quotes, dashes, ellipsis, bullet, euro and trade mark signs.
Any other character is drawn as "?" (the SVG keeps the name exactly). Glyphs are scaled by whole
pixels, so the text stays sharp.
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Mapping
from functools import cache
from typing import Any

WIDTH, HEIGHT = 640, 224  # pixels of the PNG (8-bit greyscale)
MARGIN = 24
INK, PAPER = 0x22, 0xFF
CELL_WIDTH, CELL_HEIGHT = 8, 18  # one glyph's cell, before scaling
ELLIPSIS = "\u2026"
_TEXT_WIDTH = WIDTH - 2 * MARGIN
#: (top, scale) of each line: the sku, the name's block (2 lines at 2x, or 4 at 1x), the price.
_SKU = (20, 2)
_NAME = (64, 2)
_NAME_HEIGHT = 2 * 2 * CELL_HEIGHT
_PRICE = (HEIGHT - 20 - 3 * CELL_HEIGHT, 3)
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHARACTERS = (
    "".join(map(chr, range(32, 127)))
    + "".join(map(chr, range(160, 256)))
    + "\u2026\u20ac\u2018\u2019\u201c\u201d\u2013\u2014\u2022\u2122\u0152\u0153\u0160\u0161\u017d\u017e\u0178"
)
#: For each of ``_CHARACTERS`` in order, 18 bytes (one a row, leftmost pixel in the high bit),
#: zlib-compressed, base64.
_FONT = (
    "eNqFV8Fu20YQJVnGWQVqQgs6EIXskgzTGkEQyCgg6EBTJC01pIu4kQEDPaRBnfSQo4EARQMI4nfk2IMP/YQe+kH9inRmyeXO"
    "LFl0bAni0+zMzszjPsqyBkw0hh9aZAJmOMVx/Fn+x92ytCpPZg9GVaqWhVdXsRCTJ08K5TMvy3J+erG+OCW5eGBXCE+aEG6D"
    "4Cdp8I1aVj2dPa2Eue26Fw1sPHYpWA+VPB6rT7bjYJ4gyBQyi3Jp0azL5J+UskU18bFhnRd0SA3XY8e2i0QhzsGDSVTUjuN0"
    "PlmW7ZjPcZBlr9/SXDVuyKVtglwR7kn74NXjI9t2ErMkXZdGum7IDXvCdSzeHtoh+T36GZUKi+zn5TXYZXDc9Wc6nUYptk0h"
    "uyIv4AVvXaVhJi08Jj7StI/sDzrVPYROJ8te0G5gjFpGUkjaMlqkCvm6IdR6vexWFevy1ft1oVdlymod+d11xSLn+c222pzT"
    "XHlrKa2r2Bl7RttERzbzKSG9jpNlqW3bOk6tqhC0Us5MvIgiaD/zqcCuI41EUyGmEa0CERq5btisaz/2OlMDy4IA70zHUUUk"
    "bmdJx4Qot/7DPjf3tjv4JZS+ys/PyCze3EAlN2+oD7Qo0/2BZp3hJPSqZhw18Xl4eOh5O6yC+JwVRZFkqRqZyqX741vWkvPn"
    "AEI50qK2+bAKGPTTr3qCyx7rwH7DWVS0J0aujkJ0FR4J+dvXhEJHj/PmnlfNty5PwwCM9ycl/LE8b4+VHz4kPjIV6xgyiPBH"
    "Iow/iABf+GTDECRiPBblvKMQOw/vYyPm+Hafqwyh3S1+PMC3WxXktPre+h9rhEpwIXGTi/LVVRLoucuxz7fPdQ1pFKU5L3ya"
    "ipTEaYLS0H4c+CB5vhv7eDmdDmwoKT7d/XH3SR/qoHrLMrF21Gk0icsynozYyj3RhiG1Soq/7v7+845E3veVDMZgDepiTfYj"
    "5tnv1GdeemR0oMHeYK8lW979rGi42mw2Z/fQhrXU2EfTMyv4BWh6S79Z4jnM2mNhb7BHWohgVfjh3ujLLyjyzUf7QDyiVVTf"
    "UR+cHhxj7d2Ehw3XJiyUI8BrU7++emYiMHdzFR6ppuo9AuTbJF6vX/RVz4Ux4X64xuF+OIL7MXQQsnME43CNwzgcwTiGDkKc"
    "vjImURh+DMMwSlTtXONkLqZxMhdDZC6ugxDHQDB7Tyt7R4udnm82VbXd3qRZm52rHmbnCGY3lBFyDa0yVS/L9uCxZ0odxe9j"
    "kNRn6gzF8pk2yfIZIsvn+oXlcwTLpwgyyPQBW4xGq7Ja9FWvvZvacRCNa8dBkHYcVAeb5msElNzQOHkEMATDGDqI5x9HYv/E"
    "PY7YMwnUzjVOU8jYM0E0hVLaQ450FNL8ETM86PDd0hQCBm23aaZL5arXUYhN0FBGRaEOAXnrqV7z8C6VWv1wGlDGxipLi1Ow"
    "gz+ty8Lzfe7s++aJPIkXC44sFpN44Nithx+8iM3SNO2mZf3z8oeq4g4r+NV2Ca9yRdNV1Y8tMyOkrvm82oLqCQQve0+VEiTP"
    "CbLJ9K78F1GGQXk="
)


def price_text(product: Mapping[str, Any]) -> str:
    """``12.05 EUR``: the price in cents as units and cents, then the currency."""
    cents = int(product["price_cents"])
    return f"{cents // 100}.{cents % 100:02d} {product['currency']}"


def svg(product: Mapping[str, Any]) -> str:
    """The label as an SVG document, every text escaped."""
    lines = (("sku", product["sku"], 16), ("name", product["name"], 22), ("price", price_text(product), 30))
    texts = "".join(
        f'<text x="16" y="{28 + 36 * i}" font-size="{size}" class="{kind}">{xml(value)}</text>'
        for i, (kind, value, size) in enumerate(lines)
    )
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="128" viewBox="0 0 320 128">'
        '<rect width="320" height="128" rx="8" fill="#fff" stroke="#222" stroke-width="2"/>'
        f'<g font-family="sans-serif" fill="#222">{texts}</g></svg>'
    )


def xml(text: str) -> str:
    """``text`` safe inside an XML element or a double-quoted attribute."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def png(product: Mapping[str, Any]) -> bytes:
    """The label as a PNG (``WIDTH`` x ``HEIGHT``, 8-bit greyscale): the sku, the name (wrapped on up
    to two lines, or four smaller ones) and the price, in a rounded frame."""
    import unicodedata  # deferred: only a drawing needs it

    canvas = _Canvas(WIDTH, HEIGHT)
    canvas.rounded_rectangle(2, 2, WIDTH - 2, HEIGHT - 2, 12, INK)
    canvas.rounded_rectangle(5, 5, WIDTH - 5, HEIGHT - 5, 9, PAPER)
    for (top, most), text in ((_SKU, product["sku"]), (_PRICE, price_text(product))):
        fitted, scale = _fit(text, most)
        canvas.text(MARGIN, top, fitted, scale)
    lines, scale = _name_lines(unicodedata.normalize("NFC", product["name"]))
    for i, line in enumerate(lines):
        canvas.text(MARGIN, _NAME[0] + i * CELL_HEIGHT * scale, line, scale)
    return canvas.png()


def _fit(text: str, scale: int) -> tuple[str, int]:
    """``text`` at the largest scale up to ``scale`` at which one line holds it, else cut at 1x."""
    while scale > 1 and len(text) * CELL_WIDTH * scale > _TEXT_WIDTH:
        scale -= 1
    return _cut(text, _TEXT_WIDTH // CELL_WIDTH), scale


def _name_lines(name: str) -> tuple[list[str], int]:
    """The name's lines and scale: 2x when two lines hold it, else 1x in four lines (the last cut)."""
    for scale in (_NAME[1], 1):
        width, most = _TEXT_WIDTH // (CELL_WIDTH * scale), _NAME_HEIGHT // (CELL_HEIGHT * scale)
        lines = _wrap(name, width)
        if len(lines) <= most:
            return lines, scale
    return [*lines[: most - 1], lines[most - 1][: width - 1] + ELLIPSIS], 1


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken between words (a longer word is
    broken where a line ends)."""
    lines: list[str] = []
    for piece in (word[i : i + width] for word in text.split() for i in range(0, len(word), width)):
        if lines and len(lines[-1]) + 1 + len(piece) <= width:
            lines[-1] += " " + piece
        else:
            lines.append(piece)
    return lines or [""]


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + ELLIPSIS


class _Canvas:
    """Greyscale pixels, one byte each, row after row."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.pixels = bytearray([PAPER]) * (width * height)

    def rounded_rectangle(
        self, left: int, top: int, right: int, bottom: int, radius: int, value: int
    ) -> None:
        """Fill the rectangle [left, right) x [top, bottom) with corners of ``radius`` cut round."""
        fill = bytes([value]) * (right - left)
        for y in range(top, bottom):
            rise = max(top + radius - y - 0.5, y + 0.5 - (bottom - radius), 0.0)
            inset = round(radius - (radius * radius - rise * rise) ** 0.5) if rise else 0
            start = y * self.width + left + inset
            self.pixels[start : start + right - left - 2 * inset] = fill[: right - left - 2 * inset]

    def text(self, left: int, top: int, text: str, scale: int) -> None:
        """Draw ``text`` from (left, top) at ``scale`` pixels per font pixel (unknown characters as "?")."""
        glyphs = _glyphs()
        step = CELL_WIDTH * scale
        for i, char in enumerate(text):
            x = left + i * step
            for row, bits in enumerate(glyphs.get(char) or glyphs["?"]):
                if bits:
                    pattern = _pattern(bits, scale)
                    for y in range(top + row * scale, top + (row + 1) * scale):
                        start = y * self.width + x
                        self.pixels[start : start + step] = pattern

    def png(self) -> bytes:
        """The pixels as a PNG file: greyscale, 8 bits, no filtering (zlib finds the repeats)."""
        width = self.width
        rows = b"".join(b"\x00" + self.pixels[y * width : (y + 1) * width] for y in range(self.height))
        header = struct.pack(">IIBBBBB", width, self.height, 8, 0, 0, 0, 0)
        return b"".join(
            (
                _PNG_SIGNATURE,
                _chunk(b"IHDR", header),
                _chunk(b"IDAT", zlib.compress(rows)),
                _chunk(b"IEND", b""),
            )
        )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


@cache
def _glyphs() -> dict[str, bytes]:
    """Each character's 18 rows, unpacked on the first label drawn."""
    rows = zlib.decompress(base64.b64decode(_FONT))
    return {char: rows[i * CELL_HEIGHT : (i + 1) * CELL_HEIGHT] for i, char in enumerate(_CHARACTERS)}


@cache
def _pattern(bits: int, scale: int) -> bytes:
    """One font row at ``scale``: ``CELL_WIDTH * scale`` pixels of ink or paper."""
    return b"".join(bytes([INK if bits & (0x80 >> i) else PAPER]) * scale for i in range(CELL_WIDTH))
