#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make bench, Python: contains_many over N keys (BENCH_N, default 1e7)
against a loop of `in` over a pure-Python Bloom filter written the way
such packages write one (pybloom-live's scheme: hashlib.sha256 cut into
k 32-bit indexes, a bytearray of bits), and against bfgrep -c on the same
keys from a file: medians of BENCH_RUNS alternating runs (default 5; the
pure-Python loop, some 20 s, once), one machine, the ratios printed.

Half the keys asked were added (1% rate filters of N/2 keys), so the
answers are half yes, half mostly no, for every contender; each reports
how many it found, and they must agree up to their false positives.
"""
import hashlib
import math
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy  # noqa: F401 - contains_lines answers with a NumPy array

import bftools

N = int(float(os.environ.get("BENCH_N", "1e7")))
BIN = os.environ.get("BFTOOLS_BIN", os.path.join(os.path.dirname(__file__), "..", "..", "cmd"))
KEY = "000102030405060708090a0b0c0d0e0f"


class PurePythonBloom:
    """A Bloom filter as the pure-Python packages make one."""

    def __init__(self, capacity, rate):
        self.m = math.ceil(-capacity * math.log(rate) / math.log(2) ** 2)
        self.k = min(8, math.ceil(self.m / capacity * math.log(2)))
        self.bits = bytearray((self.m + 7) // 8)
        self.unpack = struct.Struct("8I").unpack

    def _indexes(self, key):
        if isinstance(key, str):
            key = key.encode()
        m = self.m
        return [i % m for i in self.unpack(hashlib.sha256(key).digest())[:self.k]]

    def add(self, key):
        for i in self._indexes(key):
            self.bits[i >> 3] |= 1 << (i & 7)

    def __contains__(self, key):
        bits = self.bits
        return all(bits[i >> 3] & (1 << (i & 7)) for i in self._indexes(key))


def timed(fn):
    t = time.perf_counter()
    r = fn()
    return time.perf_counter() - t, r


RUNS = int(os.environ.get("BENCH_RUNS", "5"))


def medians(*fns):
    """Each fn run RUNS times, the fns alternating: (median seconds, result) of each.
    One run of each is at the mercy of this machine's noise (first touches of
    fresh memory vary 3x); medians of alternating runs are what we quote."""
    times = [[] for _ in fns]
    results = [None] * len(fns)
    for _ in range(RUNS):
        for i, fn in enumerate(fns):
            t, results[i] = timed(fn)
            times[i].append(t)
    return [(sorted(ts)[len(ts) // 2], r) for ts, r in zip(times, results)]


def main():
    work = tempfile.mkdtemp(prefix="bftools-pybench.")
    asked = ["https://example.com/page/%d/%d" % (i, i * 2654435761 % 1000003) for i in range(N)]
    added = asked[::2]
    keys_file = os.path.join(work, "keys.txt")
    added_file = os.path.join(work, "added.txt")
    filter_file = os.path.join(work, "f.bf")
    with open(keys_file, "w") as out:
        out.write("\n".join(asked) + "\n")
    with open(added_file, "w") as out:
        out.write("\n".join(added) + "\n")
    subprocess.run([os.path.join(BIN, "bfbuild"), "--no-progress", "--key", KEY, "-n", str(len(added)),
                    "-p", "0.01", "-o", filter_file, added_file], check=True)

    f = bftools.Filter(filter_file)
    def read_keys():
        with open(keys_file, "rb") as kf:
            return kf.read()
    (t_many, found), (t_file, found_file), (t_lines, found_lines), (t_grep, grep) = medians(
        lambda: f.contains_many(asked).count(True),
        lambda: f.contains_many(read_keys().splitlines()).count(True),
        lambda: int(f.contains_lines(read_keys()).sum()),
        lambda: subprocess.run([os.path.join(BIN, "bfgrep"), "--no-progress", "-c", "-f", filter_file,
                                keys_file], stdout=subprocess.PIPE, check=False))
    grep_found = int(grep.stdout.split()[0])

    pure = PurePythonBloom(len(added), 0.01)
    t_build, _ = timed(lambda: [pure.add(k) for k in added])
    t_loop, pure_found = timed(lambda: sum(1 for k in asked if k in pure))

    print("python: %d keys (BENCH_N), half of them in a 1%% filter of %d keys; medians of %d"
          " alternating runs (BENCH_RUNS), the pure-Python loop once" % (N, len(added), RUNS))
    print("python: %-44s %7.2f s  %6.1f M keys/s  found %d" % ("bftools contains_many(list)", t_many, N / t_many / 1e6, found))
    print("python: %-44s %7.2f s  %6.1f M keys/s  found %d" % ("bftools file read + contains_many", t_file, N / t_file / 1e6, found_file))
    print("python: %-44s %7.2f s  %6.1f M keys/s  found %d" % ("bftools file read + contains_lines", t_lines, N / t_lines / 1e6, found_lines))
    print("python: %-44s %7.2f s  %6.1f M keys/s  found %d" % ("bfgrep -c -f FILTER FILE", t_grep, N / t_grep / 1e6, grep_found))
    print("python: %-44s %7.2f s  %6.1f M keys/s  found %d" % ("pure-Python Bloom (hashlib), loop of `in`", t_loop, N / t_loop / 1e6, pure_found))
    print("python: (the pure-Python filter took %.1f s to fill)" % t_build)
    print("python: contains_many is %.1fx the pure-Python loop (target >= 10x): %s"
          % (t_loop / t_many, verdict(t_loop / t_many >= 10)))
    print("python: contains_many takes %.2fx bfgrep -c's time; from the file, contains_lines %.2fx,"
          " contains_many of its lines %.2fx (target <= 2x): %s"
          % (t_many / t_grep, t_lines / t_grep, t_file / t_grep, verdict(t_many / t_grep <= 2)))
    for name in (keys_file, added_file, filter_file):
        os.remove(name)
    os.rmdir(work)
    # A missed speed target is reported, as tests/bench/run.sh reports its
    # rows, and is no failure of the run; answers that disagree are.
    if not found == found_file == found_lines == grep_found:
        print("python: the ways disagree on how many keys the filter holds", file=sys.stderr)
        return 1
    return 0


def verdict(met):
    return "PASS" if met else "MISS"


if __name__ == "__main__":
    sys.exit(main())
