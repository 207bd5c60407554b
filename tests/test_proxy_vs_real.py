"""benchmarks/proxy_vs_real.py: a real code and its proxy profiled side by side. Tested with the
PFLOTRAN proxy against itself (PETSc <= 3.12's ghost updates as the "real" code, PETSc 3.13+'s
as the proxy) on a tiny deck (16^3, 2 steps, 2 ranks), where every figure is exact: the same
work and messages, other calls; and PFLOTRAN's own summary line read by the default regexes."""

import importlib.util
import shlex
from pathlib import Path

import pytest

from esmperf.launch.mpirun import mpirun_command
from test_pflotran import FIRST, binary

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "proxy_vs_real.py"
# BiCGStab, the figures docs/pflotran.md tabulates (the calcite default is the deck's GMRES)
TINY = ["--stream-mb", "0", "--nx", "16", "--ny", "16", "--nz", "16", "--steps", "2"]
TINY += ["--solver", "bicgstab"]


def load():
    spec = importlib.util.spec_from_file_location("proxy_vs_real", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pflotran_summary_read_by_the_default_regexes():
    """PFLOTRAN prints, at the end of a run (timestepper_SNES.F90, TimestepperSNESFinalizeRun),
    one summary per time stepper; the defaults read the transport one's."""
    module = load()
    output = (
        " Step     50 Time=  1.25000E+08 Dt=  2.50000E+06 [s] snes_conv_reason:    2\n"
        "  newton =   6 [     303] linear =    80 [      4000] cuts =  0 [   0]\n\n"
        " TRAN TS SNES steps = 50  newton = 303  linear = 4000  cuts = 0\n"
        " TRAN TS SNES Wasted Linear Iterations = 0\n"
    )
    work = {what: module.work_from_output(output, regex, f"--real-{what}")
            for what, regex in module.PFLOTRAN_WORK.items()}  # fmt: skip
    assert work == {"steps": 50, "newton": 303, "linear": 4000}
    with pytest.raises(
        module.ProxyVsRealError, match="no match for --real-steps .*: give --real-steps"
    ):
        module.work_from_output("no summary\n", module.PFLOTRAN_WORK["steps"], "--real-steps")


@pytest.mark.skipif(FIRST is None, reason="no MPI stack found")
def test_proxy_against_itself_both_petsc_eras(capsys):
    module = load()
    program = str(binary(FIRST))

    def command(era: str) -> str:
        return shlex.join(mpirun_command(FIRST, 2, [program, *TINY, "--petsc", era]))

    proxy_work = module.ESMPERF_WORK
    module.main(
        ["--real", command("vpscat"), "--proxy", command("sf"), "--real-name", "vpscat",
         "--proxy-name", "sf", "--region", "timed"]
        + [f"--real-{what}={regex}" for what, regex in proxy_work.items()]
    )  # fmt: skip
    table = {
        line.split(" | ")[0].strip("| "): [cell.strip(" |") for cell in line.split(" | ")[1:]]
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("| ") and " | " in line
    }
    assert table["profiled"] == ["region timed", "region timed"]
    assert table["time steps"] == ["2", "2"]
    assert table["Newton iterations"] == ["17", "17"]
    assert table["linear iterations"] == ["90", "90"]
    # per rank in the time steps: 396 MPI_Allreduce, 197 ghost messages (one face, 8 KiB)
    assert table["MPI_Allreduce per linear iteration per rank"] == ["4.40", "4.40"]
    assert table["messages per linear iteration per rank"] == ["2.19", "2.19"]
    assert table["MPI_Allreduce per Newton iteration per rank"] == ["23.29", "23.29"]
    assert table["messages per step per rank"] == ["98.50", "98.50"]
    assert table["bytes sent per step per rank"] == ["806912", "806912"]
    # vpscat: 1184 calls per rank (396 + 4 x 197); sf: 2727 (396 MPI_Allreduce, 394 each of
    # MPI_Startall and MPI_Waitall, 790 MPI_Comm_size (394 for the ghost updates, 396 for the
    # dot products), 393 MPI_Type_free, 180 MPI_Send_init, 1 MPI_Recv_init, 179
    # MPI_Request_free)
    assert table["MPI_Allreduce, % of calls"] == ["33.4", "14.5"]
    assert table["MPI_Start, % of calls"] == ["16.6", "0.0"]
    assert table["MPI_Waitany, % of calls"] == ["16.6", "0.0"]
    assert table["MPI_Startall, % of calls"] == ["16.6", "14.4"]
    assert table["MPI_Comm_size, % of calls"] == ["0.0", "29.0"]
    assert table["MPI_Type_free, % of calls"] == ["0.0", "14.4"]
    # sizes: 788 ghost entries (394 sends + 394 receives, 8 KiB) of 1580 with the 792 reductions
    assert table["messages under 4 KiB, %"] == ["50.1", "50.1"]
    assert table["modal message sizes"][0].startswith("8 KiB-16 KiB 50 %")
