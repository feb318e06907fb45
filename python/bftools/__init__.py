# SPDX-License-Identifier: MIT
"""bftools from Python: the filters, sketches and heavy-hitter summaries
the bftools programs write, read and written through libbftools itself.

    >>> import bftools
    >>> spam = bftools.Filter("spam.bf")            # made by bfbuild
    >>> "mallory@example.com" in spam
    >>> spam.contains_many(senders)                 # a list, or a NumPy bool array

Keys are str (hashed as UTF-8) or bytes, cut as the programs cut a line's
key: the whole line (a final newline is the line's end, not the key's),
or field= and separator= as -k and -t, ASCII case folded when the filter
was built with -i. So a key bfgrep finds, Python finds.

Errors are bftools.Error (bftools.FormatError for files that are not
what they are read as), with the library's message.
"""
import sys
from collections import namedtuple

from . import _bftools
from ._bftools import Error, FormatError, UpdateLock, random_key

__all__ = ["Filter", "Sketch", "TopK", "TopItem", "UpdateLock", "Error", "FormatError",
           "random_key"]
__version__ = _bftools.VERSION

_TEST, _ADD, _TEST_AND_ADD = 0, 1, 2


def _as_array(keys):
    """keys as a NumPy array when they are one (or a pandas column), else None."""
    np = sys.modules.get("numpy")
    if np is None:
        return None
    if isinstance(keys, np.ndarray):
        return keys
    if hasattr(keys, "dtype") and hasattr(keys, "to_numpy"):
        return keys.to_numpy()
    return None


def _fixed_width(arr):
    """arr as NUL-padded bytes items (dtype 'S'), or None when its items are objects."""
    np = sys.modules["numpy"]
    if arr.dtype.kind == "S":
        return np.ascontiguousarray(arr)
    if arr.dtype.kind == "U":
        return np.char.encode(arr, "utf-8")
    return None


def _through(run, run_fixed, op, keys):
    """keys through op: a list of answers, or a NumPy bool array for an array."""
    arr = _as_array(keys)
    if arr is None:
        return run(op, keys)
    np = sys.modules["numpy"]
    arr = arr.reshape(-1)
    out = np.empty(len(arr), dtype=bool)
    fixed = _fixed_width(arr)
    if fixed is not None:
        run_fixed(op, fixed, max(fixed.dtype.itemsize, 1), out)
    else:
        run(op, arr.tolist(), out)
    return None if op == _ADD else out


class Filter(_bftools.Filter):
    """A filter file's contents: a fixed filter, a growing cascade, a window
    or a DCSO filter.

    Filter(path, key_file=None, field=0, separator=None) opens a file made
    by bfbuild, bfuniq or bfmerge (or DCSO's bloom tool).
    Filter(capacity=N, rate=0.01, layout="blocked", key=None,
    key_file=None, fold_case=False, growth=0) makes an empty one, as bfbuild
    -n N -p RATE does (layout "blocked", "classic", "counting" or "dcso";
    growth=2 a growing cascade as bfuniq makes; key: 16 bytes or 32 hex
    digits, else random; key_file: kept outside, made when missing).

    key in f; f.contains_many(keys); f.contains_lines(data); f.add(key); f.add_many(keys);
    f.test_and_add(key); f.test_and_add_many(keys); f.save(path=None);
    len(f) and f.count(); f.info(); f.union(g); f.intersection(g);
    f.merge(g, op="or").
    """

    def contains_many(self, keys):
        """Whether each key may be in the filter: a list of bools, or a NumPy
        bool array when keys is a NumPy array (or a pandas column)."""
        return _through(self._run, self._run_fixed, _TEST, keys)

    def contains_lines(self, data):
        """Whether each line of data (bytes, a file's contents read whole, an
        mmap) may be in the filter, as bfgrep asks a file's lines: a NumPy
        bool array when NumPy is imported, else a list. No Python object is
        made per line, so this is the fast way from a file."""
        np = sys.modules.get("numpy")
        if np is None:
            return self._run_fixed(_TEST, data, 0)
        out = np.empty(_bftools.count_lines(data), dtype=bool)
        self._run_fixed(_TEST, data, 0, out)
        return out

    def add_many(self, keys):
        """Add every key (as bfbuild adds lines)."""
        _through(self._run, self._run_fixed, _ADD, keys)

    def test_and_add_many(self, keys):
        """Whether each key was (maybe) seen before, earlier keys of the same
        call included, adding it: bfuniq's question, answered in order."""
        return _through(self._run, self._run_fixed, _TEST_AND_ADD, keys)

    def __repr__(self):
        where = self.path if self.path is not None else "in memory"
        return "<bftools.Filter %s, %s>" % (where, self.layout)


class Sketch(_bftools.Sketch):
    """bfcount's distinct count (HyperLogLog), keyed like bfcount's.

    Sketch(path, key_file=None) opens a file of bfcount -o; Sketch(precision=16,
    key=None, key_file=None, fold_case=False) makes one with bfcount's public
    key unless told otherwise. add(key), add_many(keys), count(), len(s),
    relative_error(), merge(other), save(path).
    """

    def add_many(self, keys):
        """Count every key."""
        arr = _as_array(keys)
        fixed = _fixed_width(arr.reshape(-1)) if arr is not None else None
        if fixed is not None:
            self._add_many(fixed, max(fixed.dtype.itemsize, 1))
        else:
            self._add_many(arr.reshape(-1).tolist() if arr is not None else keys)

    def __repr__(self):
        return "<bftools.Sketch precision %d, about %.0f keys>" % (self.precision, self.count())


TopItem = namedtuple("TopItem", "key count lower upper truncated")
TopItem.__doc__ = """A key kept by a summary: it occurred at least lower and at most
upper times; count is the upper bound, the count only when lower == upper
(bftop prints LOWER-UPPER otherwise); key is bytes, its first 256 bytes
when truncated."""


class TopK(_bftools.TopK):
    """bftop's heavy-hitter summary: every key above error times the stream
    is kept, with sure bounds on its count.

    TopK(path) opens a file of bftop -o; TopK(error=1e-4, confidence=0.999,
    key=None, fold_case=False) makes one with bftop's key. update(keys),
    top(n=None), bounds(key), merge(other), save(path), total, floor.
    """

    def update(self, keys):
        """Count the keys, in order."""
        arr = _as_array(keys)
        fixed = _fixed_width(arr.reshape(-1)) if arr is not None else None
        if fixed is not None:
            self._update(fixed, max(fixed.dtype.itemsize, 1))
        else:
            self._update(arr.reshape(-1).tolist() if arr is not None else keys)

    def top(self, n=None):
        """The n most frequent keys kept (all when n is None), most frequent
        first: TopItem(key, count, lower, upper, truncated). bftop lists
        those surely frequent, lower > floor (with -v those with upper > floor)."""
        return [TopItem(k, up, lo, up, tr) for k, lo, up, tr in self._top(-1 if n is None else n)]

    def __repr__(self):
        return "<bftools.TopK %d keys counted>" % self.total
