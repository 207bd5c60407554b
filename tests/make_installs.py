"""One rule for a test whose dependency (a reader such as Thicket or otf2-print, a library such
as Debian's MCT, a private Slurm) is missing: where `make` would have installed it, root with
apt-get as in CI (`make test` runs `make setup` and the other setup targets first), the test
FAILS, naming the make target, so that an install that silently failed cannot pass as a skip;
elsewhere (a developer's machine without root or apt-get) it skips, naming the target."""

import os
import shutil

import pytest


def make_could_install() -> bool:
    """The make targets install Debian packages only as root with apt-get (scripts/setup.sh)."""
    return os.geteuid() == 0 and shutil.which("apt-get") is not None


def require(present: bool, what: str, target: str, installable: bool | None = None) -> None:
    """Nothing if `what` is present; else fail where `make TARGET` could have installed it
    (`installable`, by default make_could_install()), skip elsewhere. Call it in a test or a
    fixture: at module level a failure is a collection error, which stops the whole run."""
    if present:
        return
    message = f"{what} is missing: `make {target}` installs it"
    if make_could_install() if installable is None else installable:
        here = "and could have here (root with apt-get): see its output"
        pytest.fail(f"{message}, {here}", pytrace=False)
    pytest.skip(message, allow_module_level=True)
