# SPDX-License-Identifier: MIT
"""Calls of more keys than one chunk (65,536), where a second thread
copies keys out of a list or tuple beside the caller (run_split in
python/src/filter.c), asks every other chunk of a buffer (run_paired), or
asks one chunk while the next is filled (run_overlapped): every answer is
the one-key path's, in order, whatever the keys are made of, and one
thread (BFTOOLS_THREADS=1) answers the same."""
import numpy as np
import pytest

import bftools
from conftest import KEY

CHUNK = 65536
N = 3 * CHUNK + 1234     # the first chunk alone, then a round of two, then a short one


class Name(str):
    """A str subclass: not a plain key, so the caller copies it, not the helper."""


def mixed_keys(n=N):
    """ASCII str keys with others sprinkled in, in both halves of every round."""
    out = []
    for i in range(n):
        k = "https://example.com/%d/page" % i
        if i % 977 == 0:
            k = "ünïcode-%d" % i            # str, not ASCII: UTF-8 taken by the caller
        elif i % 1231 == 0:
            k = k.encode()                   # bytes: plain
        elif i % 1999 == 0:
            k = Name(k)
        out.append(k)
    return out


def one_by_one(f, ks):
    return [k in f for k in ks]


@pytest.fixture
def filled():
    ks = mixed_keys()
    f = bftools.Filter(capacity=len(ks), rate=0.05, key=KEY)
    f.add_many(ks[::2])
    return f, ks


@pytest.mark.parametrize("threads", ["1", "2"])
def test_a_list_a_tuple_and_an_iterator_answer_as_one_key_at_a_time(filled, monkeypatch, threads):
    monkeypatch.setenv("BFTOOLS_THREADS", threads)
    f, ks = filled
    want = one_by_one(f, ks)
    assert all(want[::2])
    assert 0 < want[1::2].count(True) < len(ks) // 10   # false positives, about 5%
    assert f.contains_many(ks) == want
    assert f.contains_many(tuple(ks)) == want
    assert f.contains_many(iter(ks)) == want
    assert f.contains_many(k for k in ks) == want


@pytest.mark.parametrize("bad_at", [CHUNK + 10, 2 * CHUNK + 700])   # the caller's half, the helper's
def test_a_bad_key_past_the_first_chunk_raises(filled, bad_at):
    f, ks = filled
    ks = list(ks)
    ks[bad_at] = 42
    with pytest.raises(TypeError, match="a key is str or bytes, not int"):
        f.contains_many(ks)
    ks[bad_at] = "fine again"
    assert len(f.contains_many(ks)) == len(ks)


def test_long_keys_fill_chunks_by_bytes_not_count():
    # 300-byte keys: 8 MiB of them is some 28,000, fewer than a chunk's count
    ks = ["%0300d" % i for i in range(150000)]
    f = bftools.Filter(capacity=len(ks), rate=0.05, key=KEY)
    f.add_many(ks[1::3])
    want = one_by_one(f, ks)
    assert want[1::3] == [True] * len(ks[1::3])
    assert f.contains_many(ks) == want
    assert f.contains_many(tuple(ks)) == want


def test_numpy_arrays_and_lines_past_two_chunks(filled):
    f, ks = filled
    raw = [k.encode() if isinstance(k, str) else k for k in ks]
    want = one_by_one(f, raw)
    assert f.contains_many(np.array(raw)).tolist() == want
    got = f.contains_lines(b"".join(k + b"\n" for k in raw))
    assert np.asarray(got).tolist() == want


def test_adds_and_test_and_add_past_a_chunk_match_one_key_at_a_time(tmp):
    ks = mixed_keys()
    ks = ks + ks[::5]                        # repeats, some in later chunks
    many = bftools.Filter(capacity=len(ks), rate=0.01, key=KEY)
    one = bftools.Filter(capacity=len(ks), rate=0.01, key=KEY)
    assert many.test_and_add_many(ks) == [one.test_and_add(k) for k in ks]
    many.save("many.bf")
    one.save("one.bf")
    with open("many.bf", "rb") as a, open("one.bf", "rb") as b:
        assert a.read() == b.read()
    added = bftools.Filter(capacity=len(ks), rate=0.01, key=KEY)
    added.add_many(iter(ks))
    added.save("added.bf")
    assert all(bftools.Filter("added.bf").contains_many(ks))
