# SPDX-License-Identifier: MIT
"""Damaged files raise bftools.Error (FormatError for what is not a good
file) with the library's message; none crashes the interpreter. Each
batch of files is read in a child python3, so that a crash fails the test
instead of ending the suite."""
import os
import subprocess
import sys

import pytest

import bftools
from conftest import KEY, TOP, keys, lines, program

CORPORA = os.path.join(TOP, "tests", "fuzz", "corpus")

# Read every file named on the command line as a filter, a sketch and a
# summary; print one line per file and kind: ok, or the exception's class.
CHILD = r"""
import sys, bftools
for path in sys.argv[1:]:
    for kind in (bftools.Filter, bftools.Sketch, bftools.TopK):
        try:
            x = kind(path)
            if kind is bftools.Filter:
                x.contains_many(["a", "b"]); x.info()
            elif kind is bftools.Sketch:
                x.count()
            else:
                x.top(5)
            print("ok")
        except bftools.Error as e:
            assert str(e), "an error without a message"
            print(type(e).__name__)
"""


def read_all(paths):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([sys.executable, "-c", CHILD, *paths], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, check=False)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]
    return r.stdout.decode().split()


@pytest.mark.parametrize("corpus", ["format", "topk"])
def test_the_fuzz_corpora_raise_or_load_never_crash(corpus):
    paths = sorted(os.path.join(CORPORA, corpus, n) for n in os.listdir(os.path.join(CORPORA, corpus)))
    assert len(paths) > 5
    got = read_all(paths)
    assert len(got) == 3 * len(paths)
    assert set(got) <= {"ok", "FormatError", "Error"}
    assert "FormatError" in got


def test_truncated_and_flipped_files_raise(tmp):
    program("bfbuild", "--key", KEY, "-n", "2000", "-o", "good.bf", stdin=lines(keys(500)))
    program("bftop", "-o", "good.top", stdin=lines(keys(500)))
    program("bfcount", "-o", "good.hll", stdin=lines(keys(500)))
    paths = []
    for good in ("good.bf", "good.top", "good.hll"):
        data = open(good, "rb").read()
        for i, cut in enumerate(range(0, len(data), max(1, len(data) // 40))):
            name = "%s.cut%d" % (good, i)
            open(name, "wb").write(data[:cut])
            flipped = bytearray(data)
            flipped[cut] ^= 0x5a
            open(name + ".flip", "wb").write(bytes(flipped))
            paths += [name, name + ".flip"]
    got = read_all(paths)
    # each damaged file loads as none of the three kinds
    assert got.count("ok") == 0


def test_the_message_names_the_file_and_says_why(tmp):
    open("spam.bf", "w").write("hello\n")
    with pytest.raises(bftools.FormatError) as e:
        bftools.Filter("spam.bf")
    assert str(e.value).startswith("spam.bf: not a bftools filter")
    with pytest.raises(FileNotFoundError):
        bftools.Filter("missing.bf")
    program("bfcount", "-o", "s.hll", stdin="a\n")
    with pytest.raises(bftools.FormatError, match="s.hll: a sketch"):
        bftools.Filter("s.hll")
