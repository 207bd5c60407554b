"""Slurm, as a command-line program sees it: the [slurm] options of a study, the batch script
of one job, and sbatch (submit, and its errors). Where jobs are and how they ended (squeue,
sacct): slurm/jobs.py; srun's MPI plug-ins: slurm/mpi.py; the study as jobs: slurm/campaign.py
and slurm/job_files.py (docs/slurm.md).
"""

import math
import shlex
import shutil
from dataclasses import dataclass, field, replace
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
KILL_AFTER = 3  # seconds between TERM and KILL of a repetition that ran out of time
SETUP_SECONDS = 120  # added to a job's time limit: node set-up, the environment, file system
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


# --- the batch script -------------------------------------------------------------------------


@dataclass
class JobRep:
    rep: int
    kind: str  # warmup, measure, profile
    profile_file: Path | None = None


@dataclass
class JobSpec:
    """One job: some repetitions of one configuration, in one allocation."""

    name: str
    label: str
    directory: Path  # the configuration's job directory: scripts, outputs, repetitions
    scratch: Path
    nodes: int
    ranks: int
    ranks_per_node: int | None
    timeout: float  # per repetition
    argv: list[str]
    reps: list[JobRep]
    exports: dict[str, str] = field(default_factory=dict)
    unsets: list[str] = field(default_factory=list)
    profiler: Path | None = None
    # Profile time bins as a local run's (timeline_bin_seconds, study/outcome.py): the wall
    # times of the configuration's stored repetitions, which the script's own add to; None
    # when the study's environment sets ESMPROF_BIN_SECONDS itself.
    bin_walls: list[float] | None = None
    timeline_bins: int = 100
    min_bin_seconds: float = 0.001

    @property
    def script_path(self) -> Path:
        return self.directory / f"reps-{self.reps[0].rep}-{self.reps[-1].rep}.sbatch"


def time_limit_minutes(spec: JobSpec) -> int:
    """The job's --time: every repetition at its timeout, plus set-up."""
    seconds = len(spec.reps) * (spec.timeout + KILL_AFTER) + SETUP_SECONDS
    return max(1, math.ceil(seconds / 60))


RUN_REP = r"""# run_rep REP KIND COMMAND...: one repetition; its output, exit code, times and load
# go to $job_dir/rep-REP/ (esmperf reads them like a local run's).
run_rep() {
    local out="$job_dir/rep-$1" start end code load_before load_after rest
    rep_out=$out
    shift 2
    rm -rf "$out" "$scratch"
    mkdir -p "$out" "$scratch"
    cd "$scratch" || return 1
    read -r load_before rest < /proc/loadavg
    start=$(date +%s.%N)
    timeout --signal=TERM --kill-after={kill_after} {timeout} "$@" \
        > "$out/stdout" 2> "$out/stderr" < /dev/null
    code=$?
    end=$(date +%s.%N)
    read -r load_after rest < /proc/loadavg
    [ "$code" -ne 0 ] || add_wall "$out" "$start" "$end"
    printf 'exit_code=%s\nstart=%s\nend=%s\nload_before=%s\nload_after=%s\n' \
        "$code" "$start" "$end" "$load_before" "$load_after" > "$out/status.part"
    mv "$out/status.part" "$out/status"
    cd "$job_dir" && rm -rf "$scratch"
    return "$code"
}

# The wall times of this configuration's repetitions that exited 0, stored ones first: the
# workload's own ("wall" in its last JSON result line), else start to end. A profiled
# repetition gets ESMPROF_BIN_SECONDS = their median / {bins}, at least {least} s, as a
# local one does (about {bins} time bins in its profile).
walls="{walls}"
add_wall() {
    local wall
    wall=$(grep '^[[:space:]]*{' "$1/stdout" | tail -n 1 |
        grep -o '"wall":[[:space:]]*[-+0-9.eE]*' | head -n 1 | sed 's/.*:[[:space:]]*//')
    [ -n "$wall" ] || wall=$(awk -v s="$2" -v e="$3" 'BEGIN { printf "%.9f", e - s }')
    walls="$walls $wall"
}
set_bin_seconds() {
    local width
    width=$(printf '%s\n' $walls | sort -g | awk -v bins={bins} -v least={least} '
        $1 > 0 { w[++n] = $1 }
        END { if (n) { m = (n % 2 ? w[(n + 1) / 2] : (w[n / 2] + w[n / 2 + 1]) / 2) / bins
                       printf "%.6g\n", m < least ? least : m } }')
    if [ -n "$width" ]; then export ESMPROF_BIN_SECONDS="$width"; fi
}

# after_failure: what a failed repetition means for the rest of the job. One killed at its
# timeout (timeout(1) exits 124, or 137 when it had to KILL) after printing a result line (a
# JSON object) may have hung in MPI_Finalize after a verified result, and then it counts:
# esmperf tells from its files, so the job goes on (and ends with 124). Without any result
# line it cannot count: that, and any other failure, ends the job, as it ends a configuration
# locally.
timed_out=0
after_failure() {
    local code=$?
    if { [ "$code" -eq 124 ] || [ "$code" -eq 137 ]; } \
            && grep -q '^[[:space:]]*{' "$rep_out/stdout"; then
        timed_out=1
    else
        exit 1
    fi
}
"""

NODE_INFO = r"""# What the job runs on (esmperf records it with the session).
{
    echo "hostname=$(hostname)"
    echo "node_list=${SLURM_JOB_NODELIST:-}"
    echo "cpu_model=$(grep -m1 -i '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "cores=$(nproc --all)"
    echo "usable_cores=$(nproc)"
    echo "memory_kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)"
    echo "kernel=$(uname -r)"
    echo "cpus_on_node=${SLURM_CPUS_ON_NODE:-}"
} > "$job_dir/job-$SLURM_JOB_ID.node"
"""


def batch_script(spec: JobSpec, options: SlurmOptions) -> str:
    """The batch script of `spec`: sbatch options, the run's environment, the repetitions."""
    quote = shlex.quote
    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name=esmperf-{spec.name}",
        f"#SBATCH --nodes={spec.nodes}",
        f"#SBATCH --ntasks={spec.ranks}",
    ]
    if spec.ranks_per_node:
        lines.append(f"#SBATCH --ntasks-per-node={spec.ranks_per_node}")
    lines.append(f"#SBATCH --time={time_limit_minutes(spec)}")
    lines.append(f"#SBATCH --output={spec.directory}/job-%j.out")
    for key in ("partition", "account", "qos", "constraint"):
        value = getattr(options, key)
        if value:
            lines.append(f"#SBATCH --{key}={value}")
    if options.exclusive:
        lines.append("#SBATCH --exclusive")
    lines += [f"#SBATCH {option}" for option in options.extra]
    first, last = spec.reps[0].rep, spec.reps[-1].rep
    lines += [
        f"# Written by esmperf (docs/slurm.md): repetitions {first}-{last} of",
        f"# {spec.label}",
        "set -u",
        f"job_dir={quote(str(spec.directory))}",
        f"scratch={quote(str(spec.scratch))}",
    ]
    lines += [f"export {name}={quote(value)}" for name, value in sorted(spec.exports.items())]
    if spec.unsets:
        lines.append("unset " + " ".join(sorted(spec.unsets)))
    text = "\n".join(lines) + "\n"
    text += NODE_INFO
    timeout = f"{spec.timeout:g}"
    walls = " ".join(repr(float(wall)) for wall in spec.bin_walls or [])
    functions = RUN_REP
    for name, value in (
        ("{kill_after}", str(KILL_AFTER)),
        ("{timeout}", timeout),
        ("{walls}", walls),
        ("{bins}", str(spec.timeline_bins)),
        ("{least}", f"{spec.min_bin_seconds:g}"),
    ):
        functions = functions.replace(name, value)
    text += functions
    for rep in spec.reps:
        command = list(spec.argv)
        if rep.profile_file is not None:
            assert spec.profiler is not None
            if spec.bin_walls is not None:
                text += "set_bin_seconds\n"
            command = [
                "env",
                f"LD_PRELOAD={spec.profiler}",
                f"ESMPROF_OUT={rep.profile_file}",
                *command,
            ]
        text += (
            f"run_rep {rep.rep} {rep.kind} {' '.join(quote(a) for a in command)} || after_failure\n"
        )
    return text + 'exit "$((timed_out ? 124 : 0))"\n'


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
