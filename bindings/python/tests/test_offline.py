"""pmixwire without a launcher: linkage, value mapping, errors, stubs."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import pmixwire
from pmixwire import _native


def test_extension_links_no_libpmix():
    so = _native.__file__
    out = subprocess.run(["ldd", so], capture_output=True, text=True, check=True).stdout
    libs = [l.split()[0] for l in out.splitlines() if l.strip()]
    assert libs, out
    assert not [l for l in libs if "pmix" in l or "event" in l or "hwloc" in l], out
    # only the C runtime
    assert {Path(l).name.split(".so")[0] for l in libs} <= {
        "linux-vdso", "libgcc_s", "libc", "ld-linux-x86-64", "libm", "libpthread", "libdl",
        "librt",
    }, out


@pytest.mark.parametrize(
    "value,pmix_type",
    [
        (True, "PMIX_BOOL"),
        (False, "PMIX_BOOL"),
        (-(2**63), "PMIX_INT64"),
        (2**63 - 1, "PMIX_INT64"),
        (2**63, "PMIX_UINT64"),
        (1.5, "PMIX_DOUBLE"),
        ("text", "PMIX_STRING"),
        (b"\0\1", "PMIX_BYTE_OBJECT"),
        (bytearray(b"x"), "PMIX_BYTE_OBJECT"),
    ],
)
def test_value_mapping(value, pmix_type):
    assert pmixwire.pmix_type_of(value) == pmix_type


@pytest.mark.parametrize("value,exc", [(None, TypeError), (2**64, ValueError), ("a\0b", ValueError), ([1], TypeError)])
def test_unmappable_values(value, exc):
    with pytest.raises(exc):
        pmixwire.pmix_type_of(value)


def test_status_names():
    assert pmixwire.status_string(-46) == "PMIX_ERR_NOT_FOUND"
    assert pmixwire.status_string(0) == "PMIX_SUCCESS"
    assert pmixwire.status_code("ERR_TIMEOUT") == -24
    assert pmixwire.status_code("PMIX_ERR_NOT_FOUND") == -46
    with pytest.raises(ValueError):
        pmixwire.status_code("NO_SUCH_STATUS")
    assert issubclass(pmixwire.NotFoundError, pmixwire.PmixError)
    assert issubclass(pmixwire.PmixTimeoutError, pmixwire.PmixError)
    assert pmixwire.WILDCARD == 0xFFFFFFFE


def _no_pmix_env():
    return {k: v for k, v in os.environ.items() if not k.startswith("PMIX_")}


def test_client_outside_a_job_raises_pmix_error():
    code = (
        "import pmixwire\n"
        "try:\n"
        "    pmixwire.Client()\n"
        "except pmixwire.PmixError as e:\n"
        "    print(e.status, e.name, e.op)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=_no_pmix_env(), capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["-1", "PMIX_ERROR", "init"], out


def test_client_with_unreachable_server_raises_unreach():
    env = _no_pmix_env()
    env.update(
        PMIX_NAMESPACE="nobody",
        PMIX_RANK="0",
        # port 1 on loopback: nothing listens there (connection refused)
        PMIX_SERVER_URI41="nobody.0;tcp4://127.0.0.1:1",
    )
    code = (
        "import pmixwire\n"
        "try:\n"
        "    pmixwire.Client(timeout=5)\n"
        "except pmixwire.PmixError as e:\n"
        "    print(e.status, e.name)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["-25", "PMIX_ERR_UNREACH"], out


def _stub_names(path):
    tree = ast.parse(Path(path).read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top.add(node.name)
            names = set()
            for b in node.body:
                if isinstance(b, ast.FunctionDef):
                    names.add(b.name)
                elif isinstance(b, ast.AnnAssign):
                    names.add(b.target.id)
            members[node.name] = names
        elif isinstance(node, ast.FunctionDef):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            top.add(node.target.id)
    return top, members


def test_stub_matches_the_extension():
    stub = Path(_native.__file__).with_name("_native.pyi")
    assert stub.is_file(), "the wheel lacks _native.pyi"
    assert Path(_native.__file__).with_name("py.typed").is_file()
    top, members = _stub_names(stub)
    public = {n for n in dir(_native) if not n.startswith("_")}
    assert public <= top, public - top
    for cls in ("Client", "Event"):
        have = {n for n in dir(getattr(_native, cls)) if not n.startswith("_")}
        assert have <= members[cls], (cls, have - members[cls])
        assert getattr(_native, cls).__doc__
    for name in ("get", "put", "commit", "fence", "publish", "lookup", "notify", "abort", "finalize"):
        assert getattr(_native.Client, name).__doc__, name


def test_store_refuses_bad_names_and_keys():
    with pytest.raises(ValueError):
        pmixwire.Store(None, name="a.b")
