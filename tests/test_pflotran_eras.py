"""The PFLOTRAN proxy's two PETSc eras (--petsc, docs/pflotran.md "Both PETSc eras"): the MPI
calls of its ghost updates and reductions, counted exactly under the profiler in the time steps
(the `timed` region) of a tiny deck (16^3, 2 steps, BiCGStab), and the same answer under both.
On the first stack found (the counts were the same under Open MPI and MPICH when checked,
2026-11-27; the suite's time is short).

vpscat (PETSc <= 3.12): one MPI_Startall and one MPI_Waitall per ghost update, one MPI_Start
and one MPI_Waitany per message. sf (PETSc 3.13+ PetscSF, read at v3.18.3): two MPI_Startall
and two MPI_Waitall per update, no MPI_Start or MPI_Waitany, MPI_Comm_size twice per update
(VecScatterBegin/End_Internal) and once per dot-product MPI_Allreduce (petsclog.h's
PetscMPIParallelComm), MPI_Type_free twice per update but the first of each scatter
(MPIPetsc_Type_compare on the 4-double block unit), and on 2 ranks (one contiguous face sent
from x itself) the persistent sends freed and re-made whenever the product's vector changes."""

import pytest

from test_pflotran import STACK_IDS, profiled

pytestmark = pytest.mark.skipif(not STACK_IDS, reason="no MPI stack found")

# BiCGStab, the figures docs/pflotran.md tabulates (the calcite default is the deck's GMRES)
TINY = ("--nx", "16", "--ny", "16", "--nz", "16", "--steps", "2", "--solver", "bicgstab")


def timed_calls(profile) -> dict[str, int]:
    """Calls per MPI function in the time steps, summed over ranks."""
    calls: dict[str, int] = {}
    for rank in profile.ranks:
        for region in rank["regions"]:
            if region["path"] == ["timed"]:
                for name, (count, *_rest) in region["functions"].items():
                    calls[name] = calls.get(name, 0) + count
    return calls


def era_run(stack_id: str, ranks: int, era: str):
    profile, result = profiled(stack_id, ranks, *TINY, "--petsc", era)
    assert result["verification"]["passed"], result["verification"]
    assert result["params"]["petsc"] == era
    return timed_calls(profile), result


# ranks -> (rank grid, ghost updates in the time steps (all ranks), messages sent in them)
UPDATES = {2: ("1x1x2", 394, 394), 4: ("1x2x2", 860, 1720)}


@pytest.mark.parametrize("stack_id", STACK_IDS[:1])
@pytest.mark.parametrize("ranks", [2, 4])
def test_vpscat_starts_each_message(stack_id, ranks):
    grid, updates, messages = UPDATES[ranks]
    calls, result = era_run(stack_id, ranks, "vpscat")
    assert result["params"]["rank_grid"] == grid
    assert calls["MPI_Startall"] == calls["MPI_Waitall"] == updates
    assert calls["MPI_Start"] == calls["MPI_Waitany"] == messages
    assert not {"MPI_Comm_size", "MPI_Type_free", "MPI_Request_free"} & set(calls)


# ranks -> (sends re-made in the time steps, their MPI_Send_init, MPI_Recv_init), all ranks
SENDS = {2: (358, 360, 2), 4: (0, 8, 8)}
COMM_SIZE = {2: 1580, 4: 3448}  # 2 per ghost update, 1 per dot-product MPI_Allreduce


@pytest.mark.parametrize("stack_id", STACK_IDS[:1])
@pytest.mark.parametrize("ranks", [2, 4])
def test_sf_starts_all_at_once(stack_id, ranks):
    grid, updates, messages = UPDATES[ranks]
    freed, send_inits, recv_inits = SENDS[ranks]
    calls, result = era_run(stack_id, ranks, "sf")
    assert result["params"]["rank_grid"] == grid
    assert calls["MPI_Startall"] == calls["MPI_Waitall"] == 2 * updates
    assert "MPI_Start" not in calls and "MPI_Waitany" not in calls
    dots = calls["MPI_Allreduce"]  # every one a dot product or norm (the update clip has none)
    assert calls["MPI_Comm_size"] == 2 * updates + dots == COMM_SIZE[ranks]
    assert calls["MPI_Type_free"] == 2 * updates - ranks  # first link of the matrix's scatter
    assert calls.get("MPI_Request_free", 0) == freed
    assert calls["MPI_Send_init"] == send_inits and calls["MPI_Recv_init"] == recv_inits
    # the same reductions and ghost messages as vpscat, the same answer
    old_calls, old = era_run(stack_id, ranks, "vpscat")
    assert calls["MPI_Allreduce"] == old_calls["MPI_Allreduce"]
    assert result["comm"]["messages"] == old["comm"]["messages"]
    assert result["comm"]["bytes_sent"] == old["comm"]["bytes_sent"]
    assert result["newton"] == old["newton"]


@pytest.mark.parametrize("stack_id", STACK_IDS[:1])
def test_sf_one_rank_has_no_reductions(stack_id):
    """On one rank PETSc's vectors are sequential: no MPI_Allreduce for a dot product or norm,
    and the matrix has no scatter; PFLOTRAN's update check in the log formulation (pm_rt.F90
    PMRTCheckUpdatePre) clips each entry and reduces nothing. What is left, per Newton
    iteration: the DM's local-only ghost update of the residual, whose PetscSF still calls
    MPI_Comm_size, MPI_Type_free and MPI_Waitall (on no requests) twice each."""
    calls, result = era_run(stack_id, 1, "sf")
    newton = result["newton"]["iterations"]
    assert newton == 17
    assert calls == {
        "MPI_Comm_size": 2 * newton,
        "MPI_Type_free": 2 * newton,
        "MPI_Waitall": 2 * newton,
    }
    old_calls, old = era_run(stack_id, 1, "vpscat")
    # vpscat: 4 per BiCGStab iteration, 2 per Newton iteration (Krylov start, norms), 1 a step
    assert old_calls == {"MPI_Allreduce": 348}
    assert 4 * old["newton"]["linear_iterations"] + 2 * newton + 2 == 348
    assert result["newton"] == old["newton"]
