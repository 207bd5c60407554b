"""Where things live: the source tree and the build tree."""

import os
from pathlib import Path


def repo_root() -> Path:
    """The esmperf source tree (holding native/), or $ESMPERF_ROOT when set."""
    override = os.environ.get("ESMPERF_ROOT")
    return Path(override) if override else Path(__file__).resolve().parents[2]


def build_root() -> Path:
    """Where native builds (one directory per MPI stack) and caches go."""
    return repo_root() / "build"
