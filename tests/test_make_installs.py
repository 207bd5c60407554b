"""tests/make_installs.py's rule: a missing dependency fails the test where make could have
installed it (root with apt-get, as in CI) and skips elsewhere, naming the make target either
way. Decided from its inputs: nothing is uninstalled."""

import os
import shutil

import pytest

from make_installs import make_could_install, require


def test_present_passes_whatever_the_machine() -> None:
    require(True, "otf2-print", "setup", installable=True)
    require(True, "otf2-print", "setup", installable=False)


def test_missing_fails_where_make_could_install_it() -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        require(False, "otf2-print (Debian otf2-tools)", "setup", installable=True)
    assert failed.value.msg == (
        "otf2-print (Debian otf2-tools) is missing: `make setup` installs it, and could have "
        "here (root with apt-get): see its output"
    )
    assert not failed.value.pytrace


def test_missing_skips_where_make_could_not() -> None:
    with pytest.raises(pytest.skip.Exception) as skipped:
        require(False, "Thicket (llnl-thicket)", "setup", installable=False)
    assert skipped.value.msg == "Thicket (llnl-thicket) is missing: `make setup` installs it"


@pytest.mark.parametrize(
    ("uid", "apt_get", "could"),
    [(0, "/usr/bin/apt-get", True), (0, None, False), (1000, "/usr/bin/apt-get", False)],
)
def test_make_could_install_as_root_with_apt_get_only(
    monkeypatch: pytest.MonkeyPatch, uid: int, apt_get: str | None, could: bool
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: uid)
    monkeypatch.setattr(shutil, "which", lambda name: apt_get if name == "apt-get" else None)
    assert make_could_install() is could
    with pytest.raises(pytest.fail.Exception if could else pytest.skip.Exception):
        require(False, "MCT", "setup")
