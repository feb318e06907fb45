# SPDX-License-Identifier: MIT
"""The PEP 517 backend of pip install ./python: make builds the extension
module for the Python running pip (its headers and extension suffix) from
this checkout's sources, in build/pip/<tag>/ of the repository, and the
wheel is zipped here. Standard library only, so that pip's isolated build
needs nothing downloaded; no setuptools, no copy of the C library."""
import base64
import hashlib
import os
import re
import subprocess
import sys
import sysconfig
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
NAME = "bftools"


def _version():
    text = open(os.path.join(TOP, "Makefile"), encoding="utf-8").read()
    return re.search(r"^VERSION\s*=\s*(\S+)", text, re.M).group(1)


def _tag():
    impl = "cp%d%d" % sys.version_info[:2]
    abi = impl + getattr(sys, "abiflags", "")
    plat = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return "%s-%s-%s" % (impl, abi, plat)


def _build_module():
    """make the module for this interpreter; its path."""
    out = os.path.join("build", "pip", _tag())
    ext = os.path.join(out, "python", NAME, "_bftools" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(["make", "-C", TOP, "--no-print-directory", "O=" + out,
                    "PYTHON=" + sys.executable, ext], check=True, stdout=sys.stderr)
    return os.path.join(TOP, ext)


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def _metadata():
    return "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nLicense: MIT\n" \
        "Requires-Python: >=3.8\n" % (NAME, _version(),
                                      "bftools' Bloom filters, sketches and summaries from Python")


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    module = _build_module()
    info = "%s-%s.dist-info" % (NAME, _version())
    files = {}
    for name in sorted(os.listdir(os.path.join(HERE, NAME))):
        if name.endswith(".py"):
            files["%s/%s" % (NAME, name)] = open(os.path.join(HERE, NAME, name), "rb").read()
    files["%s/%s" % (NAME, os.path.basename(module))] = open(module, "rb").read()
    files[info + "/METADATA"] = _metadata().encode()
    files[info + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: bftools_build\nRoot-Is-Purelib: false\n"
                              "Tag: %s\n" % _tag()).encode()
    record = [_record_line(n, d) for n, d in files.items()] + [info + "/RECORD,,"]
    files[info + "/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = "%s-%s-%s.whl" % (NAME, _version(), _tag())
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return wheel
