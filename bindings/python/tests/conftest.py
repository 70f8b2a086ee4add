"""Shared helpers of pmixwire's pytest suite."""

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
IN_CI = os.environ.get("CI", "").lower() in ("true", "1", "yes")


def missing(what):
    """A peer is absent: fail in CI, skip elsewhere (saying what)."""
    if IN_CI:
        pytest.fail("CI=true and %s is missing" % what)
    pytest.skip("%s not found" % what)


def find_exe(name, env_var=None, under_target=False):
    """An executable: from env_var, PATH, or (under_target) a venv or
    prefix that .ci/setup installs under the repository's target/."""
    if env_var and os.environ.get(env_var):
        p = os.environ[env_var]
        return p if os.access(p, os.X_OK) else None
    p = shutil.which(name)
    if p:
        return p
    if under_target:
        for pattern in ("*/bin/" + name, "*/*/bin/" + name):
            for cand in sorted((ROOT / "target").glob(pattern)):
                if os.access(cand, os.X_OK):
                    return str(cand)
    return None
