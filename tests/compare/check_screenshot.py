#!/usr/bin/env python3
"""Compares a headless-Chromium screenshot of the hand-built compare report
with the reference checked in beside this script, robustly: fonts and
anti-aliasing differ between machines, so pixels are not compared one by
one. Checked: the size; that the page is not blank (many colours, little of
it pure background); and, for each bar colour of the charts (cpu, vec and
the heterogeneous package), that the screenshot has bars of it covering an
area within 35% of the reference's (the bars' geometry comes from the SVG
alone, so it moves only with the page's layout).

    check_screenshot.py SHOT.png REFERENCE.png
"""
import struct
import sys
import zlib


def decode_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    at, idat, header = 8, b"", None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"{path}: only 8-bit RGB/RGBA, not interlaced (got depth {depth}, colour {colour})")
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - bpp] if x >= bpp else 0
            up = previous[x]
            corner = previous[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + left) & 255
            elif kind == 2:
                line[x] = (line[x] + up) & 255
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[x] = (line[x] + predictor) & 255
        rows.append(bytes(line))
        previous = line
    counts = {}
    for line in rows:
        for x in range(0, stride, bpp):
            pixel = line[x:x + 3]
            counts[pixel] = counts.get(pixel, 0) + 1
    return width, height, counts


BAR_COLOURS = {"cpu": "4e79a7", "vec": "f28e2b", "hetero": "555555"}

shot, reference = decode_png(sys.argv[1]), decode_png(sys.argv[2])
failures = []
if shot[:2] != reference[:2]:
    failures.append(f"size {shot[0]}x{shot[1]}, reference {reference[0]}x{reference[1]}")
total = shot[0] * shot[1]
white = shot[2].get(b"\xff\xff\xff", 0)
if len(shot[2]) < 50 or white > 0.97 * total:
    failures.append(f"blank: {len(shot[2])} colours, {100 * white / total:.1f}% white")
for name, colour in BAR_COLOURS.items():
    got = shot[2].get(bytes.fromhex(colour), 0)
    want = reference[2].get(bytes.fromhex(colour), 0)
    print(f"{name} bars (#{colour}): {got} pixels, reference {want}")
    if want == 0 or not (0.65 * want <= got <= 1.35 * want):
        failures.append(f"{name} bars: {got} pixels of #{colour}, reference {want}")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"screenshot matches the reference: {shot[0]}x{shot[1]}, {len(shot[2])} colours")
