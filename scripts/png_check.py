#!/usr/bin/env python3
"""Exits 1 if a PNG is blank: one colour over 97 % of it, or fewer than 32 colours.

Decodes 8-bit RGB/RGBA PNGs with the standard library only (zlib and the PNG filters), so
scripts/screenshots.sh needs no imaging package. Prints a one-line summary.
"""
import struct
import sys
import zlib
from collections import Counter


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    channels = {2: 3, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour})")
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        line = raw[y * (stride + 1) : (y + 1) * (stride + 1)]
        kind, row = line[0], bytearray(line[1:])
        if kind == 1:
            for i in range(channels, stride):
                row[i] = (row[i] + row[i - channels]) & 255
        elif kind == 2:
            for i in range(stride):
                row[i] = (row[i] + previous[i]) & 255
        elif kind == 3:
            for i in range(stride):
                left = row[i - channels] if i >= channels else 0
                row[i] = (row[i] + ((left + previous[i]) >> 1)) & 255
        elif kind == 4:
            for i in range(stride):
                a = row[i - channels] if i >= channels else 0
                b = previous[i]
                c = previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                predictor = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                row[i] = (row[i] + predictor) & 255
        rows.append(row)
        previous = row
    return width, height, channels, rows


def main():
    width, height, channels, rows = decode(sys.argv[1])
    colours = Counter()
    for row in rows:
        for x in range(0, width * channels, channels):
            colours[bytes(row[x : x + 3])] += 1
    total = width * height
    top, count = colours.most_common(1)[0]
    share = count / total
    summary = (
        f"{width}x{height}, {len(colours)} colours, the commonest #{top.hex()} "
        f"covers {100 * share:.1f} %"
    )
    print(summary)
    return 0 if share < 0.97 and len(colours) >= 32 else 1


if __name__ == "__main__":
    sys.exit(main())
