"""Knob mapping per stack: exact variables for each library version, unsupported values say
why, and (where the libraries are installed) every variable we set exists in that library and
the TCP transport really goes through TCP sockets."""

import contextlib
import os
import re
import select
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from esmperf.launch.mpirun import run_environment
from esmperf.mpi.build import build_dir
from esmperf.mpi.knob_setting import knob_setting
from esmperf.mpi.knobs import KNOBS, KnobSetting, Unsupported, implementation_of
from esmperf.mpi.stacks import Stack, discover_stacks

OPEN_MPI_4 = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4"
OPEN_MPI_5 = "Open MPI v5.0.11, package: Open MPI user@localhost Distribution"
MPICH_4 = "MPICH Version:\t4.0.2\nMPICH Device:\tch4:ucx\n"
MPICH_5 = "MPICH Version:      5.0.2\nMPICH Device:       ch4:ucx ofi\n"


def stack(version: str, family: str = "openmpi") -> Stack:
    return Stack(
        id="x",
        family=family,
        mpicc=Path("/bin/mpicc"),
        mpifort=None,
        mpirun=Path("/bin/mpirun"),
        bin_dir=Path("/bin"),
        version=version,
    )


def setting(version: str, ranks: int = 2, **knobs: str) -> KnobSetting:
    family = "openmpi" if "Open MPI" in version else "mpich"
    return knob_setting(stack(version, family), knobs, ranks, cores=2)


def test_implementation_from_the_version_string() -> None:
    assert implementation_of(stack(OPEN_MPI_4)).version == (4, 1, 4)
    mpich = implementation_of(stack(MPICH_5, "mpich"))
    assert (mpich.name, mpich.version, mpich.netmods) == ("mpich", (5, 0, 2), ("ucx", "ofi"))


def test_open_mpi_transport_and_single_copy() -> None:
    assert setting(OPEN_MPI_4, transport="tcp").env == {
        "OMPI_MCA_pml": "ob1",
        "OMPI_MCA_btl": "self,tcp",
        "OMPI_MCA_btl_tcp_if_include": "lo",
    }
    assert setting(OPEN_MPI_4, transport="shm").env["OMPI_MCA_btl"] == "self,vader"
    assert setting(OPEN_MPI_5, transport="shm").env["OMPI_MCA_btl"] == "self,sm"
    assert setting(OPEN_MPI_4, single_copy="off").env == {
        "OMPI_MCA_btl_vader_single_copy_mechanism": "none"
    }
    assert setting(OPEN_MPI_5, single_copy="off").env == {"OMPI_MCA_smsc": "^cma"}


def test_open_mpi_collectives_connections_binding() -> None:
    assert setting(OPEN_MPI_4, allreduce_algorithm="ring").env == {
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
        "OMPI_MCA_coll_tuned_allreduce_algorithm": "4",
    }
    assert setting(OPEN_MPI_4, allreduce_algorithm="default").env == {}
    assert setting(OPEN_MPI_4, connections="eager").env == {"OMPI_MCA_mpi_preconnect_mpi": "1"}
    assert setting(OPEN_MPI_4, binding="core").launcher_args == ("--bind-to", "core")
    assert setting(OPEN_MPI_4, ranks=4, binding="core").launcher_args == (
        "--bind-to",
        "core:overload-allowed",
    )
    with pytest.raises(Unsupported, match="needs Open MPI 5"):
        setting(OPEN_MPI_4, allgather_algorithm="sparbit")
    with pytest.raises(Unsupported, match="Open MPI has no tree algorithm for MPI_Allreduce"):
        setting(OPEN_MPI_4, allreduce_algorithm="tree")


def test_mpich_mapping_per_version() -> None:
    assert setting(MPICH_4, transport="tcp").env == {
        "MPIR_CVAR_NOLOCAL": "1",
        "UCX_TLS": "tcp,self",
        "UCX_NET_DEVICES": "lo",
    }
    assert setting(MPICH_5, transport="tcp").env == {
        "MPIR_CVAR_NOLOCAL": "1",
        "MPIR_CVAR_CH4_NETMOD": "ofi",
        "FI_PROVIDER": "tcp",
        "FI_TCP_IFACE": "lo",
    }
    assert setting(MPICH_5, single_copy="off").env == {"MPIR_CVAR_CH4_CMA_ENABLE": "0"}
    with pytest.raises(Unsupported, match="MPICH 4.0.2 has no CMA single copy"):
        setting(MPICH_4, single_copy="on")
    with pytest.raises(Unsupported, match="MPICH has no switch for connection set-up"):
        setting(MPICH_5, connections="eager")
    assert setting(MPICH_4, allreduce_algorithm="rabenseifner").env == {
        "MPIR_CVAR_DEVICE_COLLECTIVES": "none",
        "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "reduce_scatter_allgather",
    }
    assert (
        setting(MPICH_5, barrier_algorithm="dissemination").env["MPIR_CVAR_BARRIER_INTRA_ALGORITHM"]
        == "k_dissemination"
    )
    with pytest.raises(Unsupported, match="needs MPICH 5"):
        setting(MPICH_4, allreduce_algorithm="tree")
    assert setting(MPICH_4, binding="core").launcher_args == ("-bind-to", "core")


def test_unknown_knob_and_value() -> None:
    with pytest.raises(ValueError, match="unknown knob 'transprt'"):
        setting(OPEN_MPI_4, transprt="tcp")
    with pytest.raises(ValueError, match="knob transport has no value 'ib'"):
        setting(OPEN_MPI_4, transport="ib")


def debian_stack(stack_id: str) -> Stack:
    found = discover_stacks().by_id(stack_id)
    if found is None:
        pytest.skip(f"stack {stack_id} not installed")
    return found


def every_setting(found: Stack) -> list[KnobSetting]:
    settings = []
    for knob in KNOBS.values():
        for value in knob.values:
            with contextlib.suppress(Unsupported):
                settings.append(knob_setting(found, {knob.name: value}, 2, 2))
    return settings


def test_open_mpi_knows_every_variable_we_set() -> None:
    found = debian_stack("openmpi")
    ompi_info = shutil.which("ompi_info", path=str(found.bin_dir))
    if not ompi_info:
        pytest.skip("no ompi_info")
    text = subprocess.run(
        [ompi_info, "--all", "--level", "9", "--parsable"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    names = set(re.findall(r"^mca:[^:]+:[^:]+:param:([^:]+):", text, re.MULTILINE))
    names |= set(re.findall(r":synonym_of:name:(\S+)$", text, re.MULTILINE))
    for knob in every_setting(found):
        for variable in knob.env:
            assert variable.removeprefix("OMPI_MCA_") in names, variable


def test_mpich_knows_every_variable_we_set() -> None:
    found = debian_stack("mpich")
    mpivars = shutil.which("mpivars")
    if not mpivars:
        pytest.skip("no mpivars")
    text = subprocess.run([mpivars], capture_output=True, text=True, timeout=60).stdout
    for knob in every_setting(found):
        for variable, value in knob.env.items():
            if variable.startswith("MPIR_CVAR_"):
                assert re.search(rf"^\s*{variable}\s*[=:]", text, re.MULTILINE), variable
                if variable.endswith("_ALGORITHM"):
                    assert re.search(rf"{value}\s+- ", text), (variable, value)


def inet_connects(found: Stack, transport: str, tmp_path: Path) -> int:
    """Connections to 127.0.0.1 (X11 probes aside) made by a 2-rank ping-pong."""
    latency = build_dir(found) / "bench" / "latency"
    if not latency.is_file() or not shutil.which("strace"):
        pytest.skip("needs strace and the built latency benchmark")
    env = run_environment(found)
    env.update(knob_setting(found, {"transport": transport}, 2, 2).env)
    trace = tmp_path / f"{transport}.trace"
    process = subprocess.Popen(
        [
            "strace",
            "-f",
            "-e",
            "trace=connect",
            "-o",
            str(trace),
            str(found.mpirun),
            "-n",
            "2",
            str(latency),
            "20",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    # MPICH 4.0 over UCX TCP sometimes hangs in MPI_Finalize: its connects are traced by then,
    # for the result line comes after the ping-pongs, so the run gets a few seconds past it
    assert process.stdout is not None
    result = ""
    if select.select([process.stdout], [], [], 30)[0]:  # the line, or its end of file
        result = process.stdout.readline()
    try:
        process.wait(timeout=5 if "pingpong_us" in result else 30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    process.stdout.close()
    return sum(
        1
        for line in trace.read_text().splitlines()
        if "AF_INET" in line and not re.search(r"htons\(60[0-6]\d\)", line)
    )


@pytest.mark.parametrize("stack_id", ["openmpi", "mpich"])
def test_tcp_transport_really_uses_tcp(stack_id: str, tmp_path: Path) -> None:
    found = debian_stack(stack_id)
    assert inet_connects(found, "tcp", tmp_path) > inet_connects(found, "shm", tmp_path)
