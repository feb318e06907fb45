# SPDX-License-Identifier: MIT
"""The README's "From Python" examples, run as they are written: each
```python block of that section, on files the programs make."""
import os
import re

import numpy as np
import pandas as pd
import pytest

from conftest import TOP, keys, lines, program


def readme_blocks():
    text = open(os.path.join(TOP, "README.md"), encoding="utf-8").read()
    section = text.split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


SENDERS = ["Mallory@Example.COM", "eve@evil.test"] + ["spam%d@junk.test" % i for i in range(200)]
GOOD = ["alice@example.org", "bob@example.net"] + ["friend%d@ok.test" % i for i in range(200)]


@pytest.fixture
def files(tmp):
    program("bfbuild", "-i", "-n", "1000", "-p", "0.0001", "-o", "blocked-senders.bf",
            stdin=lines(s.lower() for s in SENDERS))
    return tmp


def test_the_readme_has_the_three_examples():
    assert len(readme_blocks()) == 3


def test_the_mail_filter(files):
    scope = {}
    exec(readme_blocks()[0], scope)
    verdict = scope["verdict"]
    assert [verdict(s) for s in ("MALLORY@example.com", "eve@evil.test")] == ["REJECT"] * 2
    # rate 1e-4 over 202 senders never added: no false positive is expected
    # under a random key with chance 1 - (1 - 1e-4)^202, about 98%; the
    # answers must be bfgrep's whatever the key
    got = [verdict(s) == "REJECT" for s in GOOD]
    listed = set(program("bfgrep", "-f", "blocked-senders.bf", stdin=lines(GOOD), check=False)
                 .stdout.decode().splitlines())
    assert got == [s in listed for s in GOOD]


def test_the_pyspark_partition_function(files):
    urls = ["https://example.com/%d" % i for i in range(5000)]
    program("bfbuild", "-n", "5000", "-o", "known-urls.bf", stdin=lines(urls[::3]))
    scope = {}
    exec(readme_blocks()[1], scope)
    drop_known = scope["drop_known"]
    want = program("bfgrep", "-v", "-f", "known-urls.bf", stdin=lines(urls),
                   check=False).stdout.decode().splitlines()
    # batch=777: several full batches and a partial one, from a generator
    assert list(drop_known(iter(urls), batch=777)) == want
    assert list(drop_known(iter(urls))) == want
    assert list(drop_known(iter([]))) == []


def test_the_pandas_column(files):
    senders = SENDERS + GOOD
    with open("mail.csv", "w") as out:
        out.write("sender,subject\n")
        for i, s in enumerate(senders):
            out.write("%s,message %d\n" % (s, i))
    scope = {}
    exec(readme_blocks()[2], scope)
    mail, kept = scope["mail"], scope["kept"]
    assert isinstance(mail["blocked"], pd.Series) and mail["blocked"].dtype == np.bool_
    listed = set(program("bfgrep", "-f", "blocked-senders.bf", stdin=lines(senders),
                         check=False).stdout.decode().splitlines())
    assert mail["blocked"].tolist() == [s in listed for s in senders]
    assert kept["sender"].tolist() == [s for s in senders if s not in listed]
