"""Headless Chromium for the report pictures: the README's PNG and the browser test.

    python tools/screenshot.py BUNDLE OUT.png     # the timeline picture of BUNDLE as a PNG

Chromium (Debian's `chromium` package) runs with --headless --no-sandbox --disable-gpu and a fresh
--user-data-dir each time; its console messages come back from --enable-logging=stderr. PNGs are read
with zlib and struct only (no imaging dependency)."""
from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

NAMES = ("chromium", "chromium-browser")
CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\]\s*(.*)")  # [pid:tid:date:INFO:CONSOLE:12] "message", source: ...


def find_chromium() -> str | None:
    return next((p for n in NAMES if (p := shutil.which(n))), None)


def run(url: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Chromium once on `url` with a throwaway profile; `args` add --screenshot=..., --dump-dom, ..."""
    exe = find_chromium()
    if exe is None:
        raise FileNotFoundError("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="k3logs-chromium-") as profile:
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
               "--enable-logging=stderr", "--v=0", "--hide-scrollbars", "--no-first-run",
               "--disable-extensions", "--disable-background-networking", *args, url]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def console_messages(stderr: str) -> list[str]:
    """What the page wrote to the browser console (errors, uncaught exceptions, logs)."""
    return [m.group(1) for line in stderr.splitlines() if (m := CONSOLE.search(line))]


def screenshot(page: Path, png: Path, width: int, height: int) -> subprocess.CompletedProcess:
    done = run(page.resolve().as_uri(), f"--screenshot={png.resolve()}", f"--window-size={width},{height}")
    if not png.is_file():
        raise RuntimeError(f"chromium wrote no screenshot: {done.stderr[-2000:]}")
    return done


def read_png(path: Path) -> tuple[int, int, list[bytes], int]:
    """(width, height, unfiltered rows, bytes per pixel) of an 8-bit, non-interlaced RGB(A)/grey PNG."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    pos, idat, head = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    if head is None:
        raise ValueError(f"{path} has no IHDR")
    width, height, depth, colour, _, _, interlace = head
    bpp = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
    if depth != 8 or bpp is None or interlace:
        raise ValueError(f"{path}: only 8-bit non-interlaced grey/RGB/RGBA PNGs are read here")
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def pixels(path: Path) -> dict[tuple[int, ...], int]:
    """How many pixels of each colour (RGB; alpha dropped)."""
    _, _, rows, bpp = read_png(path)
    counts: dict[tuple[int, ...], int] = {}
    for row in rows:
        for i in range(0, len(row), bpp):
            px = tuple(row[i:i + min(bpp, 3)])
            counts[px] = counts.get(px, 0) + 1
    return counts


def svg_size(svg: str) -> tuple[int, int]:
    m = re.search(r'<svg[^>]*\bwidth="(\d+)"[^>]*\bheight="(\d+)"', svg)
    if not m:
        raise ValueError("no width and height on the <svg> element")
    return int(m.group(1)), int(m.group(2))


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    bundle, png = argv[1], Path(argv[2])
    with tempfile.TemporaryDirectory(prefix="k3logs-shot-") as tmp:
        out = Path(tmp) / "report"
        done = subprocess.run([sys.executable, "-m", "k3logs", "analyze", bundle, "-o", f"{out}/"])
        if done.returncode not in (0, 1):
            return done.returncode
        svg = out / "timeline.svg"
        width, height = svg_size(svg.read_text(encoding="utf-8"))
        screenshot(svg, png, width, height)
    print(f"wrote {png} ({width}x{height})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
