#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""partition_ref.py - the partition function of bf(5), written again from
its text, slowly and plainly, to check the programs against.

Usage:
    partition_ref.py --vectors FILE          check SipHash-2-4-64 against
                                             the reference vectors; exit 1
                                             on a mismatch
    partition_ref.py KEYHEX N [-z]           read lines (NUL-ended with -z)
                                             and print each one's partition,
                                             0 .. N-1, one a line

The key of a line is the line itself (cut it first with cut or awk).
"""
import sys

MASK = (1 << 64) - 1


def rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & MASK


def sipround(v0, v1, v2, v3):
    v0 = (v0 + v1) & MASK; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32)
    v2 = (v2 + v3) & MASK; v3 = rotl(v3, 16); v3 ^= v2
    v0 = (v0 + v3) & MASK; v3 = rotl(v3, 21); v3 ^= v0
    v2 = (v2 + v1) & MASK; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32)
    return v0, v1, v2, v3


def siphash24(k0, k1, msg):
    """SipHash-2-4 with 64-bit output, as the paper defines it."""
    v0 = k0 ^ 0x736f6d6570736575
    v1 = k1 ^ 0x646f72616e646f6d
    v2 = k0 ^ 0x6c7967656e657261
    v3 = k1 ^ 0x7465646279746573
    tail = len(msg) % 8
    last = (len(msg) & 0xff) << 56
    last |= int.from_bytes(msg[len(msg) - tail:], "little")
    words = [int.from_bytes(msg[i:i + 8], "little") for i in range(0, len(msg) - tail, 8)]
    for m in words + [last]:
        v3 ^= m
        v0, v1, v2, v3 = sipround(v0, v1, v2, v3)
        v0, v1, v2, v3 = sipround(v0, v1, v2, v3)
        v0 ^= m
    v2 ^= 0xff
    for _ in range(4):
        v0, v1, v2, v3 = sipround(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def key_words(key16):
    return int.from_bytes(key16[:8], "little"), int.from_bytes(key16[8:], "little")


def derived(key16):
    """K' of bf(5): two SipHash-2-4-64 outputs of K over fixed labels."""
    k0, k1 = key_words(key16)
    return (siphash24(k0, k1, b"bftools partition k0"),
            siphash24(k0, k1, b"bftools partition k1"))


def partition(kd, n, key):
    return (siphash24(kd[0], kd[1], key) * n) >> 64


def check_vectors(path):
    k0, k1 = key_words(bytes(range(16)))
    checked = 0
    for row in open(path):
        cols = row.split()
        if len(cols) != 3 or cols[0] != "vectors_sip64":
            continue
        i, want = int(cols[1]), bytes.fromhex(cols[2])
        got = siphash24(k0, k1, bytes(range(i))).to_bytes(8, "little")
        if got != want:
            sys.exit(f"partition_ref: vector {i}: {got.hex()} != {want.hex()}")
        checked += 1
    if checked < 64:
        sys.exit(f"partition_ref: only {checked} vectors in {path}")
    print(f"{checked} vectors agree")


def main(argv):
    if argv[:1] == ["--vectors"]:
        return check_vectors(argv[1])
    kd, n = derived(bytes.fromhex(argv[0])), int(argv[1])
    sep = b"\0" if "-z" in argv[2:] else b"\n"
    data = sys.stdin.buffer.read()
    records = data.split(sep)
    if records and records[-1] == b"":
        records.pop()
    out = sys.stdout
    for r in records:
        out.write(f"{partition(kd, n, r)}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
