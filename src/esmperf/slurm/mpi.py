"""srun's MPI plug-ins: which one an MPI library needs to start its ranks under srun, which
ones this Slurm has (`srun --mpi=list`), and what a run srun could not start properly means
(docs/slurm.md, "srun and PMI").

Measured with Slurm 22.05 (Debian 12): Debian's Open MPI 4.1 starts under `srun --mpi=pmix`
only (it has no PMI-1/2 client: under none or pmi2 every rank stops in MPI_Init with "OMPI was
not built with SLURM's PMI support"); Debian's MPICH 4.0 starts under `--mpi=pmi2` only (under
none or pmix every rank runs alone as rank 0 of 1, and exits 0).
"""

import functools
import os
import shutil
import subprocess
from typing import Any

from esmperf.slurm.jobs import SlurmError

# The plug-in each ABI family starts with, in order of preference (when this Slurm has it).
PLUGINS_FOR_FAMILY = {"openmpi": ("pmix",), "mpich": ("pmi2",)}
OPENMPI_NO_PMI = "not built with SLURM's PMI support"


def parse_mpi_list(text: str) -> list[str]:
    """`srun --mpi=list` -> plug-in names: 22.05 prints "MPI plugin types are..." then one
    per line (tab-indented), then "specific pmix plugin versions available: pmix_v4"."""
    names: list[str] = []
    for line in text.splitlines():
        if ":" in line:  # the versions line
            names += [n.strip() for n in line.split(":", 1)[1].split(",") if n.strip()]
        elif line.startswith(("\t", " ")) and line.strip():
            names.append(line.strip().removeprefix("mpi/"))
    return list(dict.fromkeys(names))


@functools.lru_cache(maxsize=8)
def _plugins(path: str, conf: str) -> tuple[str, ...] | None:
    if not shutil.which("srun", path=path):
        return None
    try:
        result = subprocess.run(
            ["srun", "--mpi=list"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    names = parse_mpi_list(result.stdout + result.stderr)  # 22.05 prints the list on stderr
    return tuple(names) if result.returncode == 0 and names else None


def srun_mpi_plugins() -> tuple[str, ...] | None:
    """This Slurm's MPI plug-ins; None when srun is not here or does not say."""
    return _plugins(os.environ.get("PATH", ""), os.environ.get("SLURM_CONF", ""))


def srun_mpi_for(chosen: str | None, family: str | None) -> str | None:
    """The --mpi plug-in for a stack of `family`: `chosen` ([slurm] srun_mpi or --srun-mpi)
    when given and this Slurm has it, else the one the family needs when this Slurm has it,
    else None (srun's default, the site's MpiDefault)."""
    plugins = srun_mpi_plugins()
    if chosen:
        if plugins is not None and chosen not in plugins:
            raise SlurmError(
                f"srun_mpi = {chosen!r} is not an MPI plug-in of this Slurm "
                f"(srun --mpi=list: {', '.join(plugins)}): set [slurm] srun_mpi "
                "or --srun-mpi to one of them, or leave it out for esmperf to "
                "choose"
            )
        return chosen
    for wanted in PLUGINS_FOR_FAMILY.get(family or "", ()):
        if plugins and wanted in plugins:
            return wanted
    return None


def srun_failure(
    status: str,
    reason: str | None,
    output: str,
    result: dict[str, Any] | None,
    ranks: int,
    argv: list[str],
) -> tuple[str, str | None]:
    """(status, reason) of a repetition srun started, with the fix when the MPI library could
    not start under srun's plug-in: Open MPI stopping in MPI_Init for want of PMI support, or
    ranks that each ran alone (the result says 1 rank where `ranks` were started)."""
    used = next((a.split("=", 1)[1] for a in argv if a.startswith("--mpi=")), None)
    how = f"srun --mpi={used}" if used else "srun (the site's default --mpi)"
    if status != "ok" and OPENMPI_NO_PMI in " ".join(output.split()):
        return "failed", (
            f'Open MPI could not start under {how}: it says "OMPI was '
            "not built with SLURM's PMI support\" for that plug-in; fix: "
            'srun_mpi = "pmix" in [slurm] or --srun-mpi pmix (`srun --mpi=list` '
            'lists this site\'s plug-ins), or mpi_launcher = "mpirun"'
        )
    said = (result or {}).get("ranks")
    if status == "ok" and isinstance(said, int) and not isinstance(said, bool) and said != ranks:
        return "failed", (
            f"the program ran as {said} rank(s) under {how} where {ranks} "
            "were started: its MPI did not get its ranks from srun's PMI "
            "plug-in, so each ran alone; fix: srun_mpi in [slurm] or "
            "--srun-mpi naming the plug-in the MPI library speaks (MPICH: "
            "pmi2, Open MPI: pmix; `srun --mpi=list`), or "
            'mpi_launcher = "mpirun"'
        )
    return status, reason
