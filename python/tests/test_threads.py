# SPDX-License-Identifier: MIT
"""Python threads share a filter: readers together (the GIL released in
the library), adds taking turns with them, every answer as on one thread."""
import threading

import numpy as np

import bftools
from conftest import KEY, keys

ADDED = keys(40000, seed=21)
ASKED = keys(40000, seed=22, prefix="t") + ADDED[::2]


def run_threads(target, n):
    errors = []

    def guarded(i):
        try:
            target(i)
        except BaseException as e:  # noqa: B902 - reported below
            errors.append(e)
    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_readers_on_threads_get_the_answers_of_one_thread():
    f = bftools.Filter(capacity=len(ADDED), rate=0.01, key=KEY)
    f.add_many(ADDED)
    want = f.contains_many(ASKED)
    arr = np.array(ASKED)
    got = {}

    def reader(i):
        for _ in range(3):
            a = f.contains_many(ASKED) if i % 2 else f.contains_many(arr).tolist()
            assert a == want
        got[i] = sum(k in f for k in ASKED[:2000])
    run_threads(reader, 8)
    assert len(set(got.values())) == 1


def test_adds_take_turns_with_readers():
    f = bftools.Filter(capacity=2 * len(ADDED), rate=0.01, key=KEY)
    f.add_many(ADDED)
    before = f.contains_many(ADDED)
    new = keys(20000, seed=23, prefix="n")
    parts = [new[i::4] for i in range(4)]

    def worker(i):
        if i < 4:
            f.add_many(parts[i])
        else:
            # keys added before stay present whatever the adds do meanwhile
            assert f.contains_many(ADDED) == before
    run_threads(worker, 8)
    assert all(f.contains_many(new)) and all(before)
    g = bftools.Filter(capacity=2 * len(ADDED), rate=0.01, key=KEY)
    g.add_many(ADDED + new)
    assert f.info()["bits_set"] == g.info()["bits_set"]
