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


# The smpi stack's SimGrid: an install prefix (`make setup-simgrid` builds SimGrid 4.1 into
# .venv/simgrid-4.1) instead of the smpicc and smpirun on PATH (Debian's 3.32). docs/simulate.md,
# "SimGrid 4.1".
SIMGRID_VARIABLE = "ESMPERF_SIMGRID"


def simgrid_prefix() -> Path | None:
    """The SimGrid prefix $ESMPERF_SIMGRID names (absolute), None when unset: PATH's SimGrid."""
    value = os.environ.get(SIMGRID_VARIABLE, "").strip()
    return Path(value).expanduser().absolute() if value else None


def stack_build_dir(stack_id: str) -> Path:
    """build/<stack id>, where native/ is built for a stack. The smpi stack on the SimGrid of
    $ESMPERF_SIMGRID builds into build/smpi-<its prefix's name> (build/smpi-simgrid-4.1): its
    programs, counter and plugin link that SimGrid, not PATH's."""
    prefix = simgrid_prefix() if stack_id == "smpi" else None
    return build_root() / (f"{stack_id}-{prefix.name}" if prefix else stack_id)
