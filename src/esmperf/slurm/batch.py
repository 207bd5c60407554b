"""Slurm, as a command-line program sees it: the [slurm] options of a study, and sbatch (submit,
and its errors). The batch script of one job: slurm/batch_script.py; where jobs are and how
they ended (squeue, sacct): slurm/jobs.py; srun's MPI plug-ins: slurm/mpi.py; the study as
jobs: slurm/campaign.py and slurm/job_files.py (docs/slurm.md).
"""

import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from esmperf.errors import unknown_key
from esmperf.launch import launcher_names
from esmperf.slurm.jobs import SlurmError, run_slurm_command
from esmperf.slurm.mpi import srun_mpi_for

MPI_LAUNCHERS = ("mpirun", "srun")
SLURM_KEYS = (
    "launcher",
    "partition",
    "account",
    "qos",
    "constraint",
    "exclusive",
    "extra",
    "mpi_launcher",
    "srun_mpi",
    "poll",
)
COMMANDS = ("sbatch", "squeue", "sacct")
MAX_POLL = 60.0  # longest wait between two looks at the queue


@dataclass(frozen=True)
class SlurmOptions:
    """The [slurm] table of a study file, overridden by the command line."""

    launcher: str = "local"  # local: mpirun here; srun: in this allocation; slurm: sbatch
    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    constraint: str | None = None
    exclusive: bool = True  # whole nodes: nobody else's job beside a measured one
    extra: tuple[str, ...] = ()  # more sbatch options, e.g. "--mem=0"
    mpi_launcher: str = "mpirun"  # inside a job: the stack's mpirun, or srun
    srun_mpi: str | None = None  # srun --mpi=... (default: the stack's, slurm/mpi.py)
    poll: float = 10.0  # first wait between looks at the queue (seconds), then x1.5 to 60


def slurm_options(table: Any, source: str) -> SlurmOptions:
    """Check and read the [slurm] table of a study file."""
    if not isinstance(table, dict):
        raise SlurmError(
            f"{source}: [slurm] must be a table, e.g.\n[slurm]\n"
            'partition = "compute"\naccount = "myproject"'
        )
    for key in table:
        if key not in SLURM_KEYS:
            raise SlurmError(f"{source}: {unknown_key(key, SLURM_KEYS, '[slurm]')}")
    values: dict[str, Any] = {}
    for key in ("partition", "account", "qos", "constraint", "srun_mpi"):
        if key in table:
            if not isinstance(table[key], str) or not table[key].strip():
                raise SlurmError(
                    f"{source}: [slurm] {key} must be a non-empty string, got {table[key]!r}"
                )
            values[key] = table[key].strip()
    for key, allowed in (("launcher", launcher_names()), ("mpi_launcher", MPI_LAUNCHERS)):
        if key in table:
            if table[key] not in allowed:
                raise SlurmError(
                    f"{source}: [slurm] {key} must be one of "
                    f"{', '.join(allowed)}, got {table[key]!r}"
                )
            values[key] = table[key]
    if "exclusive" in table:
        if not isinstance(table["exclusive"], bool):
            raise SlurmError(f"{source}: [slurm] exclusive must be true or false")
        values["exclusive"] = table["exclusive"]
    if "extra" in table:
        extra = table["extra"]
        extra = [extra] if isinstance(extra, str) else extra
        if not isinstance(extra, list) or not all(
            isinstance(e, str) and e.startswith("-") for e in extra
        ):
            raise SlurmError(
                f"{source}: [slurm] extra is a list of sbatch options, e.g. "
                'extra = ["--mem=0", "--reservation=bench"]'
            )
        values["extra"] = tuple(extra)
    if "poll" in table:
        poll = table["poll"]
        if isinstance(poll, bool) or not isinstance(poll, (int, float)) or poll <= 0:
            raise SlurmError(
                f"{source}: [slurm] poll is the first wait between looks at "
                f"the queue in seconds (> 0), got {poll!r}"
            )
        values["poll"] = float(poll)
    return SlurmOptions(**values)


def with_command_line(options: SlurmOptions, **overrides: Any) -> SlurmOptions:
    """`options` with the command line's values (None: not given) in place of the file's."""
    given = {key: value for key, value in overrides.items() if value is not None}
    if given.get("launcher") not in (None, *launcher_names()):
        raise SlurmError(f"--launcher {given['launcher']}: one of {', '.join(launcher_names())}")
    if given.get("mpi_launcher") not in (None, *MPI_LAUNCHERS):
        raise SlurmError(
            f"--mpi-launcher {given['mpi_launcher']}: one of {', '.join(MPI_LAUNCHERS)}"
        )
    if "srun_mpi" in given and not given["srun_mpi"].strip():
        raise SlurmError(
            "--srun-mpi names one of srun's MPI plug-ins (`srun --mpi=list`), e.g. --srun-mpi pmix"
        )
    return replace(options, **given)


def srun_command(
    options: SlurmOptions,
    ranks: int,
    nodes: int,
    ranks_per_node: int | None,
    family: str | None = None,
) -> list[str]:
    """srun starting `ranks` ranks on `nodes` nodes of the allocation it runs in, with the MPI
    plug-in a stack of ABI `family` needs (slurm/mpi.py) unless srun_mpi names one."""
    command = ["srun", f"--nodes={nodes}", f"--ntasks={ranks}"]
    if ranks_per_node:
        command.append(f"--ntasks-per-node={ranks_per_node}")
    plugin = srun_mpi_for(options.srun_mpi, family)
    if plugin:
        command.append(f"--mpi={plugin}")
    return command


def check_allocation(environ: dict[str, str]) -> None:
    """--launcher srun runs here, in an allocation: say how to get one when there is none."""
    if not environ.get("SLURM_JOB_ID"):
        raise SlurmError(
            "--launcher srun runs the study inside a Slurm allocation, and "
            "SLURM_JOB_ID is not set here: get one first (salloc --nodes=2 "
            "--exclusive, then the same esmperf command), or submit jobs from "
            "here with --launcher slurm"
        )
    if not shutil.which("srun"):
        raise SlurmError("--launcher srun: srun is not on PATH (module load slurm?)")


def check_commands() -> None:
    missing = [name for name in COMMANDS if not shutil.which(name)]
    if missing:
        raise SlurmError(
            f"--launcher slurm needs {', '.join(COMMANDS)} on PATH and "
            f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not: "
            "run esmperf on the cluster's login node (after `module load slurm` "
            "if your site needs it), or use --launcher local"
        )


# --- sbatch, squeue, sacct --------------------------------------------------------------------


def submit(script: Path) -> str:
    """Submit `script` (sbatch --parsable); its job id, or SlurmError with sbatch's reason."""
    result = run_slurm_command(["sbatch", "--parsable", str(script)])
    job_id = result.stdout.strip().split(";")[0]  # "123" or "123;cluster"
    if result.returncode != 0 or not job_id.isdigit():
        message = sbatch_message(result.stderr or result.stdout)
        raise SlurmError(f"sbatch refused the job {script}: {message}{_sbatch_hint(message)}")
    return job_id


def sbatch_message(text: str) -> str:
    """sbatch's own words without the 'sbatch: error:' prefixes, one line."""
    lines = [line.split("error:", 1)[-1].strip() for line in text.splitlines() if line.strip()]
    return "; ".join(dict.fromkeys(lines)) or "no message"


def _sbatch_hint(message: str) -> str:
    lowered = message.lower()
    for word, fix in (
        ("partition", "set [slurm] partition or --partition to one `sinfo -s` lists"),
        (
            "account",
            "set [slurm] account or --account to one of yours (`sacctmgr show "
            "assoc user=$USER format=account`)",
        ),
        ("qos", "set [slurm] qos or --qos to one your account may use, or leave it out"),
        (
            "time limit",
            "lower the study's timeout or repetitions, or choose a partition "
            "with a longer time limit",
        ),
        ("node count", "fewer nodes (ranks / ranks_per_node) or another partition"),
        (
            "constraint",
            "set [slurm] constraint or --constraint to a feature `sinfo -o '%P %f'` lists",
        ),
    ):
        if word in lowered:
            return f" (fix: {fix}; stored results are kept, run the same command again)"
    return (
        " (fix the [slurm] table of the study or the --partition/--account/--qos options; "
        "stored results are kept, run the same command again)"
    )
