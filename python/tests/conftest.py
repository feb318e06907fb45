# SPDX-License-Identifier: MIT
"""Shared set-up of the pytest suite: where the programs are, how to run
them, fixed keys and data, and one TAP line per test for make check's
count (BFTOOLS_TAP names the file; tests/run.sh counts its lines)."""
import os
import random
import subprocess
import sys

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("BFTOOLS_BIN") or os.path.join(TOP, "cmd")
KEY = "000102030405060708090a0b0c0d0e0f"
KEY_BYTES = bytes(range(16))

# The package under test: make check sets PYTHONPATH to this build's;
# a run by hand falls back to make python's.
if not any(os.path.isdir(os.path.join(p, "bftools")) for p in sys.path if p):
    sys.path.insert(0, os.path.join(TOP, "build", "python"))


def program(name, *args, stdin=None, check=True):
    """Run a bftools program with a fixed environment; its CompletedProcess."""
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": os.environ.get("HOME", "/")}
    for name_ in ("LD_LIBRARY_PATH", "ASAN_OPTIONS", "UBSAN_OPTIONS", "GCOV_PREFIX"):
        if name_ in os.environ:
            env[name_] = os.environ[name_]
    if isinstance(stdin, str):
        stdin = stdin.encode()
    r = subprocess.run([os.path.join(BIN, name), "--no-progress", *args], input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, check=False)
    if check and r.returncode != 0:
        raise AssertionError("%s %s: exit %d: %s" % (name, " ".join(args), r.returncode,
                                                   r.stderr.decode(errors="replace")))
    return r


def keys(n, seed=35, prefix="k"):
    """n distinct keys, the same on every run: ASCII, UTF-8, blanks and commas."""
    rng = random.Random(seed)
    words = ["é", "ß", "Ünïcode", "a b", "x,y", "TAB\tbed", "日本"]
    return ["%s%d-%s-%d" % (prefix, i, rng.choice(words), rng.getrandbits(40)) for i in range(n)]


def lines(ks):
    return "".join(k + "\n" for k in ks)


@pytest.fixture
def tmp(tmp_path, monkeypatch):
    """A scratch directory, made the working directory, with a fixed umask."""
    monkeypatch.chdir(tmp_path)
    old = os.umask(0o022)
    yield tmp_path
    os.umask(old)


_tap = None


def pytest_sessionstart(session):
    global _tap
    path = os.environ.get("BFTOOLS_TAP")
    if path:
        _tap = open(path, "w")


def pytest_runtest_logreport(report):
    """ok / not ok per test: its call, or the set-up that failed or skipped it."""
    if _tap is None:
        return
    name = report.nodeid.replace("\n", " ")
    if report.when == "call" or (report.when == "setup" and not report.passed):
        if report.skipped:
            _tap.write("ok - %s # skip\n" % name)
        else:
            _tap.write("%s - %s\n" % ("ok" if report.passed else "not ok", name))
    elif report.when == "teardown" and report.failed:
        _tap.write("not ok - %s (teardown)\n" % name)
    _tap.flush()
