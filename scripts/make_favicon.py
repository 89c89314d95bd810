"""Draw the app's favicon (two overlapping pages, a copy) into neardup/favicon.png.

    python scripts/make_favicon.py

The app serves this file itself: a Material icon as `page_icon` makes every browser fetch the icon from a
font CDN on each page load, which a server without internet access (or a privacy policy) does not allow.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

SIZE_PX = 64
OUT = Path(__file__).resolve().parent.parent / "neardup" / "favicon.png"


def draw(size_px: int = SIZE_PX) -> Image.Image:
    img = Image.new("RGBA", (size_px, size_px), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    u = size_px / 64
    back, front = (120, 130, 150, 255), (255, 75, 75, 255)  # grey page behind Streamlit's red
    d.rounded_rectangle([4 * u, 4 * u, 40 * u, 44 * u], radius=6 * u, fill=back)
    d.rounded_rectangle(
        [20 * u, 18 * u, 60 * u, 60 * u],
        radius=6 * u,
        fill=front,
        outline=(255, 255, 255, 255),
        width=max(1, round(3 * u)),
    )
    for y in (30, 39, 48):  # lines of text on the front page
        d.rectangle([28 * u, y * u, 52 * u, (y + 3) * u], fill=(255, 255, 255, 255))
    return img


if __name__ == "__main__":
    draw().save(OUT, optimize=True)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")
