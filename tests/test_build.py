"""`esmperf build` does nothing when nothing changed (issue 21): no reconfigure, no generated
wrappers written again, no recompile; a changed source rebuilds only what depends on it."""

import os
import time

import pytest

from esmperf.mpi.build import build_dir, build_stack
from esmperf.mpi.stacks import discover_stacks
from esmperf.paths import repo_root


@pytest.fixture(scope="module")
def stack():
    found = discover_stacks().by_id("openmpi")
    if found is None or not (build_dir(found) / "prof" / "libesmprof.so").is_file():
        pytest.skip("the openmpi stack is not built: run `make build`")
    return found


def test_a_second_build_does_nothing(stack) -> None:
    assert build_stack(stack).ok  # whatever the tree's state, then
    result = build_stack(stack)
    assert result.up_to_date(), result.log.read_text()
    log = result.log.read_text()
    assert "Configuring" not in log and "Generating MPI wrappers" not in log


def test_what_a_build_skips_is_still_said_when_it_did_not_configure() -> None:
    smpi = discover_stacks().by_id("smpi")
    if smpi is None or not (build_dir(smpi) / "apps").is_dir():
        pytest.skip("the smpi stack is not built: run `make build`")
    assert build_stack(smpi).ok
    result = build_stack(smpi)
    assert result.up_to_date()
    assert any(part.startswith("tests/") for part in result.skipped())


def test_a_changed_source_rebuilds_only_its_object(stack) -> None:
    source = repo_root() / "native" / "prof" / "prof_json.c"
    stat = source.stat()
    later = time.time() + 1
    os.utime(source, (later, later))
    try:
        result = build_stack(stack)
        log = result.log.read_text()
        assert result.ok and not result.up_to_date()
        assert "prof_json.c.o" in log and "prof_core.c.o" not in log
        assert "Generating MPI wrappers" not in log
    finally:
        os.utime(source, (stat.st_atime, stat.st_mtime))
    assert build_stack(stack).ok
