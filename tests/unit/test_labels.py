"""The catalogue's price label (functions/catalogue/labels.py): a PNG every image library reads, legible
for any product the input schema admits, and an SVG whose text is escaped."""

from __future__ import annotations

import io
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from PIL import Image

PRODUCT = {"sku": "MUG-01", "name": 'Mug "A" & <b> Café', "price_cents": 1205, "currency": "EUR"}
ROOT = Path(__file__).resolve().parents[2]

#: Imports the catalogue as Lambda does, then takes its folder off the path as the local stack and
#: the tests do; reports whether labels.py had run by then, and draws a label.


@pytest.fixture(scope="module")
def labels(catalogue: ModuleType) -> ModuleType:
    module: ModuleType = catalogue.labels
    return module


def decoded(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    image.load()  # every row decoded: a broken stream or a bad CRC raises here
    return image


def ink_rows(image: Image.Image) -> list[int]:
    """The rows inside the frame with any ink on them."""
    width, height = image.size
    pixels = image.load()
    assert pixels is not None
    return [y for y in range(8, height - 8) if any(pixels[x, y] != 255 for x in range(8, width - 8))]


def test_the_label_is_a_greyscale_png_of_its_size(labels: ModuleType) -> None:
    image = decoded(labels.png(PRODUCT))
    assert (image.format, image.size, image.mode) == ("PNG", (labels.WIDTH, labels.HEIGHT), "L")
    assert image.getextrema() == (labels.INK, labels.PAPER)


def test_the_label_draws_the_sku_the_name_and_the_price_in_their_places(labels: ModuleType) -> None:
    rows = ink_rows(decoded(labels.png(PRODUCT)))
    for top, scale in (labels._SKU, labels._NAME, labels._PRICE):
        band = range(top, top + labels.CELL_HEIGHT * scale)
        assert any(y in band for y in rows), (top, scale)


@pytest.mark.parametrize(
    "product",
    [
        {"sku": "S" * 64, "name": "N" * 200, "price_cents": 100_000_000, "currency": "JPY"},
        {"sku": "A", "name": "x", "price_cents": 0, "currency": "EUR"},
        {"sku": "A.B_C-D", "name": " ".join(["Steingut"] * 25), "price_cents": 7, "currency": "CHF"},
        {"sku": "U-1", "name": "日本語の名前 \U0001f600 Ω ŝ", "price_cents": 99, "currency": "JPY"},
        {"sku": "T-1", "name": "tab\there\nnew line\u200b", "price_cents": 1, "currency": "USD"},
    ],
)
def test_any_product_the_schema_admits_draws_a_valid_label(
    labels: ModuleType, product: dict[str, Any]
) -> None:
    image = decoded(labels.png(product))
    assert image.size == (labels.WIDTH, labels.HEIGHT)
    assert ink_rows(image)


def test_a_long_name_wraps_and_a_longer_one_is_drawn_smaller_then_cut(labels: ModuleType) -> None:
    assert labels._name_lines("Mug") == (["Mug"], 2)
    two, scale = labels._name_lines("word " * 14)  # 69 characters: two lines at 2x
    assert scale == 2 and len(two) == 2 and all(len(line) <= 37 for line in two)
    smaller, scale = labels._name_lines("word " * 40)  # 199 characters: at 1x, up to four lines
    assert scale == 1 and len(smaller) == 3 and all(len(line) <= 74 for line in smaller)
    cut, scale = labels._name_lines("w" * 400)
    assert scale == 1 and len(cut) == 4 and cut[-1].endswith(labels.ELLIPSIS) and len(cut[-1]) == 74


def test_a_word_longer_than_a_line_is_broken_where_the_line_ends(labels: ModuleType) -> None:
    assert labels._wrap("ab " + "c" * 12 + " d", 5) == ["ab", "ccccc", "ccccc", "cc d"]
    assert labels._wrap("", 5) == [""]


def test_the_font_has_a_glyph_for_ascii_latin_1_and_typographic_marks(labels: ModuleType) -> None:
    glyphs = labels._glyphs()
    assert set(map(chr, range(32, 127))) | set(map(chr, range(160, 256))) <= set(glyphs)
    assert set("\u2026\u20ac\u2018\u2019\u201c\u201d\u2013\u2014\u2022\u2122\u0152\u0153") <= set(glyphs)
    blank = [char for char in glyphs if not any(glyphs[char])]
    assert sorted(blank) == [" ", "\xa0"]  # space and no-break space
    assert all(len(rows) == labels.CELL_HEIGHT for rows in glyphs.values())


def test_the_svg_escapes_every_text_and_names_the_price(labels: ModuleType) -> None:
    svg = labels.svg({**PRODUCT, "sku": "A&B", "name": "</text><script>x</script>"})
    assert "<script>" not in svg and "&lt;/text&gt;&lt;script&gt;x&lt;/script&gt;" in svg
    assert ">A&amp;B<" in svg and ">12.05 EUR<" in svg
    assert labels.price_text({"price_cents": 7, "currency": "USD"}) == "0.07 USD"
