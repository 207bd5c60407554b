"""The batch script of one Slurm job (docs/slurm.md): some repetitions of one configuration in
one allocation. Its sbatch options and the run's environment, then each repetition through
run_rep: its own directory of output, exit code, times and load, which esmperf reads back like a
local run's (slurm/job_files.py); the profile's time bins and the finalize grace as a local
run's; what a failed repetition means for the rest of the job."""

import math
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from esmperf.slurm.batch import SlurmOptions

KILL_AFTER = 3  # seconds between TERM and KILL of a repetition that ran out of time
SETUP_SECONDS = 120  # added to a job's time limit: node set-up, the environment, file system


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
    # The finalize grace of a run here (study/execute.py), in seconds, for a figure of merit
    # from a verified result line; None: none. `python` runs its watch (slurm/finalize_watch.py).
    finalize_grace: float | None = None
    python: str = sys.executable

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
    local out="$job_dir/rep-$1" start end code load_before load_after rest pid watcher ended
    rep_out=$out
    shift 2
    rm -rf "$out" "$scratch"
    mkdir -p "$out" "$scratch"
    cd "$scratch" || return 1
    # the ranks' world census, when the runner asked for one, beside the output (study/world.py)
    [ -z "${ESMPERF_WORLD_DIR:-}" ] || export ESMPERF_WORLD_DIR="$out/world"
    read -r load_before rest < /proc/loadavg
    start=$(date +%s.%N)
    timeout --signal=TERM --kill-after={kill_after} {timeout} "$@" \
        > "$out/stdout" 2> "$out/stderr" < /dev/null &
    pid=$!
    watcher=
    if [ -n "$finalize_grace" ]; then
        nice -n 19 "$esmperf_python" -m esmperf.slurm.finalize_watch \
            "$finalize_grace" "$pid" "$out" &
        watcher=$!
    fi
    wait "$pid"
    code=$?
    end=$(date +%s.%N)
    [ -z "$watcher" ] || wait "$watcher"
    read -r load_after rest < /proc/loadavg
    ended=0  # ended by the finalize grace after its verified result: it counts
    [ "$code" -eq 0 ] || [ ! -e "$out/ended_after_result" ] || ended=1
    [ "$code" -ne 0 ] && [ "$ended" -eq 0 ] || add_wall "$out" "$start" "$end"
    printf 'exit_code=%s\nstart=%s\nend=%s\nload_before=%s\nload_after=%s\n' \
        "$code" "$start" "$end" "$load_before" "$load_after" > "$out/status.part"
    printf 'ended_after_result=%s\n' "$ended" >> "$out/status.part"
    mv "$out/status.part" "$out/status"
    cd "$job_dir" && rm -rf "$scratch"
    [ "$ended" -eq 1 ] || return "$code"
}

# The finalize grace, as a local run's (study/execute.py): {grace_text}
finalize_grace={grace}
esmperf_python={python}

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
    grace = spec.finalize_grace
    for name, value in (
        (
            "{grace_text}",
            f"once a repetition has printed its\n# verified result line, it gets {grace:g} s to "
            "exit, then it is ended and counts (slurm/finalize_watch.py,\n# beside the run, "
            "niced: a watch that cannot start leaves the run to its timeout)."
            if grace is not None
            else "none (no verified\n# result line to watch for).",
        ),
        ("{grace}", "" if grace is None else f"{grace:g}"),
        ("{python}", quote(spec.python)),
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
