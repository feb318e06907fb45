# SPDX-License-Identifier: MIT
"""bftools.Filter against the programs: files each writes read by the
other, byte for byte where a save is involved, and every answer equal to
the program's on the same keys."""
import json
import os
import string

import numpy as np
import pytest

import bftools
from conftest import KEY, KEY_BYTES, keys, lines, program

ADDED = keys(3000)
# keys never added, and the added ones again: both answers occur
ASKED = keys(3000, seed=36, prefix="q") + ADDED[::3]


def bfgrep_answers(filter_path, asked, *opts):
    """Which of asked bfgrep selects: a list of bools (keys are distinct lines)."""
    out = program("bfgrep", *opts, "-f", filter_path, stdin=lines(asked), check=False).stdout
    got = set(out.decode().split("\n")[:-1])
    return [k in got for k in asked]


@pytest.mark.parametrize("layout", ["blocked", "classic", "counting"])
def test_reads_bfbuild_files_and_answers_as_bfgrep(tmp, layout):
    # rate 0.05 over 3000 never-added keys: about 150 false positives,
    # which must be the same ones for both
    program("bfbuild", "--key", KEY, "--layout", layout, "-n", "3000", "-p", "0.05",
            "-o", "f.bf", stdin=lines(ADDED))
    f = bftools.Filter("f.bf")
    want = bfgrep_answers("f.bf", ASKED)
    assert f.contains_many(ASKED) == want
    assert [k in f for k in ASKED[:500]] == want[:500]
    assert all(f.contains_many(ADDED))
    assert 0 < want.count(True) - len(ADDED[::3]) < 400


def test_growing_cascade_from_bfuniq_answers_as_bfgrep(tmp):
    # bfuniq without -n grows a cascade
    many = keys(20000, seed=7)
    program("bfuniq", "--key", KEY, "-p", "0.01", "-f", "seen.bf", stdin=lines(many))
    f = bftools.Filter("seen.bf")
    assert f.info()["kind"] == "growing"
    asked = keys(2000, seed=8, prefix="z") + many[::10]
    assert f.contains_many(asked) == bfgrep_answers("seen.bf", asked)


@pytest.mark.parametrize("fmt", ["dcso", "dcso-gzip"])
def test_dcso_files_both_ways(tmp, fmt):
    program("bfbuild", "--format", fmt, "-n", "3000", "-p", "0.05", "-o", "d.bloom",
            stdin=lines(ADDED))
    f = bftools.Filter("d.bloom")
    assert f.layout == "dcso" and f.info()["kind"] == "dcso"
    assert f.contains_many(ASKED) == bfgrep_answers("d.bloom", ASKED)
    g = bftools.Filter(capacity=3000, rate=0.05, layout="dcso")
    g.add_many(ADDED)
    g.save("py.bloom")
    program("bfbuild", "--format", "dcso", "-n", "3000", "-p", "0.05", "-o", "prog.bloom",
            stdin=lines(ADDED))
    assert open("py.bloom", "rb").read() == open("prog.bloom", "rb").read()


def test_count_window_answers_as_bfgrep(tmp):
    program("bfbuild", "--key", KEY, "--window", "2000keys", "-o", "w.bf", stdin=lines(ADDED))
    f = bftools.Filter("w.bf")
    info = f.info()
    assert info["kind"] == "count window" and info["clock_keys"] == 3000
    assert f.contains_many(ASKED) == bfgrep_answers("w.bf", ASKED)
    # the window forgot the oldest keys: not all added keys are still there
    assert not all(f.contains_many(ADDED))


@pytest.mark.parametrize("layout", ["blocked", "classic", "counting"])
def test_a_save_is_byte_for_byte_bfbuilds(tmp, layout):
    program("bfbuild", "--key", KEY, "--layout", layout, "-n", "5000", "-p", "0.01",
            "-o", "prog.bf", stdin=lines(ADDED))
    f = bftools.Filter(capacity=5000, rate=0.01, layout=layout, key=KEY)
    f.add_many(ADDED[:1000])
    for k in ADDED[1000:1100]:
        f.add(k)
    f.add_many(np.array(ADDED[1100:], dtype=object))
    f.save("py.bf")
    assert open("py.bf", "rb").read() == open("prog.bf", "rb").read()


def test_test_and_add_is_bfuniqs_question_and_state(tmp):
    stream = ADDED[:2000] + ADDED[500:2500] + ADDED[100:200]
    out = program("bfuniq", "--key", KEY, "-n", "4000", "-p", "0.001", "-f", "state.bf",
                  stdin=lines(stream)).stdout.decode().splitlines()
    f = bftools.Filter(capacity=4000, rate=0.001, key=KEY_BYTES, layout="blocked")
    seen = f.test_and_add_many(stream[:3000])
    seen += [f.test_and_add(k) for k in stream[3000:]]
    assert [k for k, s in zip(stream, seen) if not s] == out
    f.save("py.bf")
    assert open("py.bf", "rb").read() == open("state.bf", "rb").read()


def test_a_file_saved_by_python_is_read_by_the_programs(tmp):
    f = bftools.Filter(capacity=3000, rate=0.05, key=KEY, growth=2)
    f.add_many(ADDED)
    f.save("py.bf")
    assert bfgrep_answers("py.bf", ASKED) == f.contains_many(ASKED)
    info = json.loads(program("bfinfo", "--json", "py.bf").stdout)
    assert info["kind"] == "growing" and info["insertions"] == len(ADDED)


def test_updating_a_program_file_then_bfbuild_adds_to_it(tmp):
    program("bfbuild", "--key", KEY, "-n", "5000", "-o", "both.bf", stdin=lines(ADDED[:1500]))
    program("bfbuild", "--key", KEY, "-n", "5000", "-o", "all.bf", stdin=lines(ADDED))
    f = bftools.Filter("both.bf")
    f.add_many(ADDED[1500:])
    f.save()
    assert open("both.bf", "rb").read() == open("all.bf", "rb").read()


def ascii_upper(s):
    """s with ASCII a-z made A-Z, the only letters -i folds."""
    return s.translate(str.maketrans(string.ascii_lowercase, string.ascii_uppercase))


def test_fold_case_and_fields_are_cut_as_the_programs_cut(tmp):
    rows = ["%s|%s|x" % (i, k) for i, k in enumerate(ADDED[:1000])]
    program("bfbuild", "--key", KEY, "-i", "-k", "2", "-t", "|", "-n", "1000", "-o", "f.bf",
            stdin=lines(rows))
    f = bftools.Filter("f.bf", field=2, separator="|")
    assert f.fold_case
    asked = ["0|%s" % ascii_upper(k) for k in ADDED[:1000:7]] + ["1|nope%d" % i for i in range(300)] \
        + ["no-second-field"]
    want = bfgrep_answers("f.bf", asked, "-k", "2", "-t", "|")
    assert f.contains_many(asked) == want
    assert want.count(True) >= len(ADDED[:1000:7])
    # a line read from a file keeps its newline: it ends the line, it is no key byte
    assert f.contains_many(["2|" + ascii_upper(ADDED[2]) + "\n", "x|" + ADDED[3]]) == [True, True]
    # the whole line is the key when no field is given
    assert bftools.Filter("f.bf").contains_many([ADDED[2]]) == bfgrep_answers("f.bf", [ADDED[2]])


def test_str_and_bytes_keys_are_the_same_utf8_key(tmp):
    f = bftools.Filter(capacity=100, key=KEY)
    f.add("Ünïcode")
    assert "Ünïcode".encode() in f and "Ünïcode\n" in f and b"Unicode" not in f
    with pytest.raises(TypeError):
        f.contains_many([1])
    with pytest.raises(TypeError):
        5 in f


def test_numpy_arrays_give_numpy_answers(tmp):
    program("bfbuild", "--key", KEY, "-n", "3000", "-p", "0.05", "-o", "f.bf", stdin=lines(ADDED))
    f = bftools.Filter("f.bf")
    want = f.contains_many(ASKED)
    for arr in (np.array(ASKED), np.array([k.encode() for k in ASKED]),
                np.array(ASKED, dtype=object)):
        got = f.contains_many(arr)
        assert isinstance(got, np.ndarray) and got.dtype == bool
        assert got.tolist() == want


def test_info_is_what_bfinfo_json_says(tmp):
    program("bfbuild", "--key", KEY, "--layout", "counting", "-n", "3000", "-o", "c.bf",
            stdin=lines(ADDED))
    program("bfuniq", "--key", KEY, "-f", "g.bf", stdin=lines(keys(9000, seed=2)))
    program("bfbuild", "--format", "dcso-gzip", "-n", "3000", "-o", "d.bloom", stdin=lines(ADDED))
    program("bfbuild", "--key", KEY, "--window", "1000keys", "-o", "w.bf", stdin=lines(ADDED))
    for name in ("c.bf", "g.bf", "d.bloom", "w.bf"):
        want = json.loads(program("bfinfo", "--json", name).stdout)
        assert bftools.Filter(name).info() == want, name


def test_len_count_union_and_intersection_are_bfcounts(tmp):
    a, b = ADDED[:2000], ADDED[1000:]
    program("bfbuild", "--key", KEY, "-n", "5000", "-o", "a.bf", stdin=lines(a))
    program("bfbuild", "--key", KEY, "-n", "5000", "-o", "b.bf", stdin=lines(b))
    fa, fb = bftools.Filter("a.bf"), bftools.Filter("b.bf")

    def bfcount(*args):
        return int(program("bfcount", *args).stdout.split()[0])
    assert len(fa) == bfcount("-f", "a.bf") == round(fa.count())
    assert round(fa.union(fb)) == bfcount("--union", "a.bf", "b.bf")
    assert round(fa.intersection(fb)) == bfcount("--intersection", "a.bf", "b.bf")
    fa.merge(fb)
    fa.save("m.bf")
    program("bfmerge", "-o", "prog.bf", "a.bf", "b.bf")
    assert open("m.bf", "rb").read() == open("prog.bf", "rb").read()


def test_filters_of_different_shape_or_key_are_not_combined(tmp):
    a = bftools.Filter(capacity=1000, key=KEY)
    b = bftools.Filter(capacity=1000)
    with pytest.raises(bftools.Error, match="key"):
        a.union(b)
    with pytest.raises(bftools.Error):
        a.merge(bftools.Filter(capacity=5000, key=KEY))


def test_a_key_kept_outside_needs_its_key_file(tmp):
    f = bftools.Filter(capacity=1000, key_file="k.key")
    assert oct(os.stat("k.key").st_mode & 0o777) == "0o600"
    f.add_many(ADDED[:100])
    f.save("ext.bf")
    want = bfgrep_answers("ext.bf", ASKED, "--key-file", "k.key")
    assert bftools.Filter("ext.bf", key_file="k.key").contains_many(ASKED) == want
    keyless = bftools.Filter("ext.bf")
    assert keyless.info()["key_external"] is True
    with pytest.raises(bftools.Error, match="key"):
        ADDED[0] in keyless


def test_save_waits_for_the_programs_update_lock(tmp):
    program("bfbuild", "--key", KEY, "-n", "1000", "-o", "f.bf", stdin=lines(ADDED[:10]))
    with bftools.UpdateLock("f.bf"):
        r = program("bfbuild", "--no-wait", "-f", "f.bf", stdin="x\n", check=False)
        assert r.returncode == 2 and b"another bftools process is updating it" in r.stderr
        with pytest.raises(bftools.Error, match="another bftools process"):
            bftools.Filter("f.bf").save(wait=False)
    bftools.Filter("f.bf").save(wait=False)
    program("bfbuild", "--no-wait", "-f", "f.bf", stdin="x\n")


def test_contains_lines_asks_a_files_lines_as_bfgrep_does(tmp):
    program("bfbuild", "--key", KEY, "-n", "3000", "-p", "0.05", "-o", "f.bf",
            stdin=lines(ADDED + [""]))
    f = bftools.Filter("f.bf")
    asked = ASKED + ["", ADDED[0] + "\r", "\0" + ADDED[1]]
    data = lines(asked).encode()
    want = f.contains_many(asked)
    assert f.contains_lines(data).tolist() == want == bfgrep_answers("f.bf", asked)
    # the last line may lack its newline; an empty input has no line
    assert f.contains_lines(data[:-1]).tolist() == want
    assert f.contains_lines(b"").tolist() == []
    assert f.contains_lines(bytearray(b"\n\n")).tolist() == [True, True]
    with open("asked.txt", "wb") as out:
        out.write(data)
    import mmap
    with open("asked.txt", "rb") as src, mmap.mmap(src.fileno(), 0, access=mmap.ACCESS_READ) as m:
        assert f.contains_lines(m).tolist() == want


def test_a_growing_seen_set_is_byte_for_byte_bfuniqs(tmp):
    # bfuniq without -n: a growing cascade, first stage 100000 keys, rate 1e-6
    stream = ADDED + ADDED[::5]
    out = program("bfuniq", "--key", KEY, "-f", "state.bf", stdin=lines(stream)).stdout
    f = bftools.Filter(capacity=100000, rate=1e-6, growth=2, key=KEY)
    seen = f.test_and_add_many(stream)
    assert [k for k, s in zip(stream, seen) if not s] == out.decode().split("\n")[:-1]
    f.save("py.bf")
    assert open("py.bf", "rb").read() == open("state.bf", "rb").read()


def test_adding_to_a_count_window_is_byte_for_byte_bfbuilds(tmp):
    program("bfbuild", "--key", KEY, "--window", "2000keys", "-o", "w.bf", stdin=lines(ADDED[:1500]))
    program("bfbuild", "--key", KEY, "--window", "2000keys", "-o", "all.bf", stdin=lines(ADDED[:1500]))
    program("bfbuild", "-f", "all.bf", stdin=lines(ADDED[1500:]))
    f = bftools.Filter("w.bf")
    f.add_many(ADDED[1500:])
    f.save()
    assert open("w.bf", "rb").read() == open("all.bf", "rb").read()
