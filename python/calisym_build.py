"""A PEP 517 build backend for the one-module package calisym_ref, in the
tree so that `pip install ./python` needs no download: it writes a pure
Python wheel (and an sdist) of calisym_ref.py with the metadata of
pyproject.toml's [project] table (name, version, description,
requires-python, dependencies)."""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

_HERE = os.path.dirname(os.path.abspath(__file__))
_MODULE = "calisym_ref.py"


def _project():
    """The [project] table's keys this backend uses (strings and lists of
    strings), read without a TOML library (Python < 3.11 has none)."""
    with open(os.path.join(_HERE, "pyproject.toml"), encoding="utf-8") as fh:
        text = fh.read()
    table = text.split("[project]", 1)[1].split("\n[", 1)[0]
    out = {}
    for key, value in re.findall(r'^([\w-]+)\s*=\s*(.+)$', table, re.M):
        items = re.findall(r'"([^"]*)"', value)
        out[key] = items if value.strip().startswith("[") else items[0]
    for key in ("name", "version"):
        if key not in out:
            raise ValueError("pyproject.toml: [project] has no %s" % key)
    return out


def _dist(p):
    return "%s-%s" % (re.sub(r"[-_.]+", "_", p["name"]).lower(), p["version"])


def _metadata(p):
    lines = ["Metadata-Version: 2.1", "Name: " + p["name"], "Version: " + p["version"]]
    if "description" in p:
        lines.append("Summary: " + p["description"])
    if "requires-python" in p:
        lines.append("Requires-Python: " + p["requires-python"])
    lines += ["Requires-Dist: " + d for d in p.get("dependencies", [])]
    return ("\n".join(lines) + "\n").encode("utf-8")


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _project()
    dist = _dist(p)
    info = dist + ".dist-info"
    with open(os.path.join(_HERE, _MODULE), "rb") as fh:
        files = [(_MODULE, fh.read())]
    files += [(info + "/METADATA", _metadata(p)),
              (info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: calisym_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n")]
    record = io.StringIO()
    for name, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.write("%s,sha256=%s,%d\n" % (name, digest, len(data)))
    record.write(info + "/RECORD,,\n")
    files.append((info + "/RECORD", record.getvalue().encode("utf-8")))
    name = dist + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files:
            zf.writestr(zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return name


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    dist = _dist(p)
    name = dist + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tf:
        for f in ("pyproject.toml", "calisym_build.py", _MODULE, "README.md"):
            tf.add(os.path.join(_HERE, f), arcname=dist + "/" + f)
        data = _metadata(p)
        ti = tarfile.TarInfo(dist + "/PKG-INFO")
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
    return name
