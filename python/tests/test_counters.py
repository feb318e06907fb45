# SPDX-License-Identifier: MIT
"""bftools.Sketch against bfcount and bftools.TopK against bftop: the same
counts and bounds on the same keys, files read both ways, saves byte for
byte."""
import json

import numpy as np
import pytest

import bftools
from conftest import KEY, keys, lines, program

DISTINCT = keys(20000, seed=11)


def zipf_stream(n=30000, distinct=2000, seed=5):
    """A skewed stream, the same on every run: key i drawn with weight 1/(i+1)."""
    import random
    rng = random.Random(seed)
    names = keys(distinct, seed=seed, prefix="w")
    return rng.choices(names, weights=[1.0 / (i + 1) for i in range(distinct)], k=n)


def test_sketch_counts_as_bfcount_and_saves_its_bytes(tmp):
    stream = DISTINCT + DISTINCT[::2]
    out = program("bfcount", "-o", "prog.hll", stdin=lines(stream)).stdout
    s = bftools.Sketch()
    s.add_many(stream[:5000])
    s.add_many(np.array(stream[5000:]))
    assert len(s) == int(out.split()[0]) == round(s.count())
    assert s.insertions == len(stream)
    s.save("py.hll")
    assert open("py.hll", "rb").read() == open("prog.hll", "rb").read()
    loaded = bftools.Sketch("prog.hll")
    assert loaded.count() == s.count()


def test_sketches_merge_as_bfcount_counts_their_union(tmp):
    a, b = DISTINCT[:12000], DISTINCT[8000:]
    program("bfcount", "--key", KEY, "-o", "a.hll", stdin=lines(a))
    sb = bftools.Sketch(key=KEY)
    sb.add_many(b)
    sb.save("b.hll")
    union = int(program("bfcount", "-s", "a.hll", "-s", "b.hll").stdout.split()[0])
    sa = bftools.Sketch("a.hll")
    sa.merge(sb)
    assert len(sa) == union
    with pytest.raises(bftools.Error, match="key"):
        sa.merge(bftools.Sketch())


def test_sketch_folds_and_cuts_as_bfcount(tmp):
    rows = ["%d %s" % (i % 7, k) for i, k in enumerate(DISTINCT[:3000])]
    want = int(program("bfcount", "-k", "1", stdin=lines(rows)).stdout.split()[0])
    s = bftools.Sketch(field=1)
    s.add_many(rows)
    assert len(s) == want == 7


@pytest.mark.parametrize("make", [bftools.Sketch, bftools.TopK,
                                  lambda **kw: bftools.Filter(capacity=10, **kw)])
@pytest.mark.parametrize("sep", ["ab", "\n", ""])
def test_a_separator_is_one_character_not_a_newline(tmp, make, sep):
    with pytest.raises(ValueError, match="one ASCII character"):
        make(field=1, separator=sep)


def test_topk_lists_what_bftop_lists_with_its_bounds(tmp):
    stream = zipf_stream()
    prog = json.loads(program("bftop", "-e", "0.001", "-n", "20", "--json", "-o", "prog.top",
                              stdin=lines(stream)).stdout)
    t = bftools.TopK(error=0.001)
    t.update(stream[:10000])
    t.update(np.array(stream[10000:], dtype=object))
    got = t.top(20)
    # bftop lists the keys surely frequent: lower bound above the floor
    assert len(prog) == 20
    sure = [i for i in t.top() if i.lower > t.floor][:20]
    assert [(i.key.decode(), i.lower, i.upper) for i in sure] == \
        [(d["key"], d["lower"], d["upper"]) for d in prog]
    assert all(d["guaranteed"] and d["count"] == (d["lower"] if d["lower"] == d["upper"] else None)
               for d in prog)
    assert t.total == len(stream)
    assert t.bounds(got[0].key) == (got[0].lower, got[0].upper)
    t.save("py.top")
    assert open("py.top", "rb").read() == open("prog.top", "rb").read()
    loaded = bftools.TopK("prog.top")
    assert loaded.top(20) == got


def test_topk_merges_as_bftop_merges_summaries(tmp):
    stream = zipf_stream()
    program("bftop", "-e", "0.001", "-o", "a.top", stdin=lines(stream[:15000]))
    program("bftop", "-e", "0.001", "-o", "b.top", stdin=lines(stream[15000:]))
    prog = json.loads(program("bftop", "-n", "15", "--json", "-s", "a.top", "-s", "b.top",
                              stdin="").stdout)
    a = bftools.TopK("a.top")
    a.merge(bftools.TopK("b.top"))
    assert len(prog) == 15
    assert [(i.key.decode(), i.lower, i.upper) for i in a.top() if i.lower > a.floor][:15] == \
        [(d["key"], d["lower"], d["upper"]) for d in prog]
