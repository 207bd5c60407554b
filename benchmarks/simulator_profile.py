"""Where the simulator's time goes (docs/simulate.md, "Where the simulator's time goes"): one
mid-size folded case run under SimGrid SMPI with the settings of every simulated run at scale
(mpi/smpi_knobs.py), then with one SimGrid option changed at a time, each run's CPU seconds,
simulated time and message count side by side; optionally the base run under `perf record`
(its CPU by symbol, grouped by the simulator's parts) and `perf stat`.

    .venv/bin/python benchmarks/simulator_profile.py [--case homme|pflotran|redist-nopack|matching]
        [--ranks N]
        [--steps 2] [--platform ib-qdr] [--variants base,privatization-dlopen,...] [--repeats 1]
        [--perf record|stat|none] [--program-args '--solver bicgstab'] [--computation off]
        [--json FILE]

The smpi stack's SimGrid: Debian's 3.32, or the one $ESMPERF_SIMGRID names (SimGrid 4.1 from
`make setup-simgrid`, built with `ESMPERF_SIMGRID=$PWD/.venv/simgrid-4.1 esmperf build --stack
smpi`); the table's heading says which.

Cases (computation = model, folded, so every simulated time is deterministic, but the last):
  homme     homme ne120, --stream 0, JUROPA nodes (8 ranks a node), IB QDR; default 1,024 ranks
  pflotran  pflotran 100_100_100, --stream-mb 0, Dell R815 nodes (48 a node), IB QDR; 384 ranks
  redist-nopack  redist-bench S, pack none, one node a rank, IB QDR, computation measured; 64
  matching  bench/matching, 2,000 messages from each rank to rank 0, network only; 33 ranks
Variants: the SMPI option appended after the run's own (SimGrid keeps the last value given),
or a knob changed (eager-mpi: eager_limit = mpi, the default auto's value on the seeds'
platforms; eager-simgrid: SMPI's own, every send a rendezvous at scale); `a+b` makes both changes
(allreduce-rdb+privatization-mmap).
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.launch.smpirun import (  # noqa: E402
    counter_arguments,
    message_counter,
    simulated_messages,
    simulated_time,
)
from esmperf.mpi.build import build_dir  # noqa: E402
from esmperf.mpi.global_state import privatization_args  # noqa: E402
from esmperf.mpi.knob_setting import knob_setting, write_files  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402
from esmperf.study.execute import execute  # noqa: E402
from median_spread import spread  # noqa: E402

CASES = {
    "homme": {
        "program": ("homme", "--size", "ne120", "--stream", "0"),
        "machine": "juropa",
        "ranks_per_node": 8,
        "ranks": 1024,
    },
    "pflotran": {
        "program": ("pflotran", "--size", "100_100_100", "--stream-mb", "0"),
        "machine": "dell-r815",
        "ranks_per_node": 48,
        "ranks": 384,
    },
    # the redistribution's NOPACK: thousands of requests a rank completed by one MPI_Waitall;
    # computation measured (the library has no kernel model), so simulated times vary a little
    "redist-nopack": {
        "program": ("redist-bench", "--size", "S", "--pack", "none", "--peers", "none"),
        "directory": "redist",
        "options": ("--repeats", "1"),
        "machine": None,
        "ranks_per_node": 1,
        "ranks": 64,
    },
    # MPI's matching with thousands of receives pending at rank 0 (bench/matching: 32 senders
    # of 2,000 messages; docs/simulate.md, "Matching by source"); network only, no steps
    "matching": {
        "program": ("matching", "2000", "1", "0"),
        "binary": "bench/matching",
        "machine": None,
        "computation": "off",
        "ranks_per_node": 1,
        "ranks": 33,
    },
}
# one option changed at a time against the base (the flags of every simulated run at scale;
# since 2026-11-28 privatization off for the workloads, which keep no mutable global)
VARIANTS = {
    "base": (),
    # the base without the simulator's plugins (native/simcount: the message counter, the host's
    # cost by destination and the one-pass MPI_Waitall): what counting costs, what waitall saves
    "no-plugins": (),
    "privatization-dlopen": ("--cfg=smpi/privatization:dlopen",),
    "privatization-mmap": ("--cfg=smpi/privatization:mmap",),
    "privatization-no": ("--cfg=smpi/privatization:no",),
    "precision-1e-9": ("--cfg=surf/precision:1e-9",),
    "precision-1e-5": ("--cfg=surf/precision:1e-5",),
    "optim-full": ("--cfg=network/optim:Full",),
    "detached-65536": ("--cfg=smpi/send-is-detached-thresh:65536",),
    # detached below Open MPI's openib eager limit but not asynchronous: eager_limit = mpi
    # without smpi/async-small-thresh (the data waits for the receive)
    "detached-12288": ("--cfg=smpi/send-is-detached-thresh:12288",),
    "allreduce-rdb": ("--cfg=smpi/allreduce:rdb",),
    "contexts-ucontext": ("--cfg=contexts/factory:ucontext",),
    "eager-mpi": (),  # the knobs below, not appended options
    "eager-simgrid": (),
}
# variants that change a knob rather than append an option
KNOB_VARIANTS = {"eager-mpi": {"eager_limit": "mpi"}, "eager-simgrid": {"eager_limit": "simgrid"}}
# perf's symbols grouped by the part of the simulator (or the program) they belong to; the
# first pattern that matches a "dso symbol" line wins
GROUPS = (
    (
        "privatization (data segment mapped in at each switch)",
        r"smpi_switch_data_segment|mmap|munmap|mprotect|vma|page|pte|pmd|tlb|memcg|lru|folio|"
        r"fault|rmap|mm_|clear_page|copy_page|fget|prepend_path|touch_atime|d_path",
    ),
    (
        "dlopen's copy of the program per rank (files, symbols)",
        r"ext4|find_get_block|recently_deleted|__pi_memcpy|copy_file|jbd2|_slab|inode|dentry|"
        r"^_dl_|^strcmp$|do_lookup|check_match",
    ),
    (
        "CPU clock readings (SMPI times every burst between MPI calls)",
        r"clock_gettime|posix_cpu_clock|task_sched_runtime|_raw_spin_unlock_irqrestore|"
        r"smpi_bench_|threadtimer|update_rq_clock|sched_clock",
    ),
    (
        "context switching",
        r"[Cc]ontext|swapcontext|raw_swap|ActorImpl::(yield|resume)|sigprocmask|simcall|"
        r"Maestro|run_all_actors|schedule",
    ),
    (
        "network model solver (lmm)",
        r"lmm::|maxmin|Constraint|Variable|Element|NetworkCm02|NetworkModel|LinkImpl|"
        r"resource::|Action|next_occurring_event|update_actions|solve|share_resources|[Hh]eap",
    ),
    (
        "mailboxes and detached-send lists (3.32) or sets (4.1)",
        r"MailboxImpl|CommImpl|comm_|_List_node|list<|std::__cxx11::list|ActivityImpl|_Rb_tree",
    ),
    (
        "MPI matching and SMPI requests",
        r"smpi::|Request::|smpi_|Datatype|Comm::|colls::|Coll_|PMPI_|MPI_",
    ),
    ("the workload's own code", r"^(homme|pflotran|libm|smpitmp)"),
    ("the kernel's scheduler (other processes)", r"irqentry_exit|finish_task_switch|schedule"),
    (
        "allocation and copies",
        r"malloc|free|_int_|operator new|operator delete|cfree|tcache|unlink_chunk|memmove|memcpy",
    ),
    ("reference counts and casts", r"intrusive_ptr|dynamic_cast|get_actor_by_pid"),
)

# symbols whose time with their callees' says what a part costs
INCLUSIVE = (
    r"^(smpi_switch_data_segment|__mmap|mmap64|munmap|__munmap|do_syscall_64|"
    r"simgrid::kernel::lmm::System::solve|simgrid::kernel::lmm::MaxMin::do_solve|"
    r"simgrid::kernel::context::.*swap.*|raw_swapcontext|"
    r"simgrid::kernel::activity::MailboxImpl::.*|simgrid::smpi::Request::match_.*|"
    r"simgrid::kernel::EngineImpl::run|asm_exc_page_fault)"
)


def command_for(
    stack,
    case: dict,
    ranks: int,
    steps: int,
    variant: str,
    wrapper: list[str],
    workdir: Path,
    platform: str,
) -> tuple[list[str], dict[str, str]]:
    knobs = {"platform": platform}
    if case["machine"]:
        knobs |= {"machine": case["machine"], "computation": "model", "fold": "on"}
    if case.get("computation"):
        knobs["computation"] = case["computation"]
    for part in variant.split("+"):
        knobs |= KNOB_VARIANTS.get(part, {})
    setting = knob_setting(stack, knobs, ranks, 2, case["ranks_per_node"], workdir / "platforms")
    write_files(setting)
    _, *args = case["program"]
    program = [str(build_dir(stack) / program_path(case)), *args]
    if "binary" not in case:  # a workload: its steps and options (a benchmark takes its own)
        program += ["--steps", str(steps), *case.get("options", ())]
    # the base is what a study runs: privatization off for a program that keeps no global
    launcher_args = privatization_args(Path(program[0]), setting.launcher_args)
    options = [option for part in variant.split("+") for option in VARIANTS[part]]
    launcher = [*wrapper, *launcher_args, *options]
    env = run_environment(stack, os.environ) | setting.env | {"TMPDIR": str(workdir)}
    return mpirun_command(stack, ranks, program, launcher), env


def program_path(case: dict) -> Path:
    """The case's program in the stack's build directory: a benchmark's own path, or
    apps/<directory>/<name> for a workload."""
    name = case["program"][0]
    return Path(case.get("binary") or Path("apps") / case.get("directory", name) / name)


def one_run(
    stack,
    case: dict,
    ranks: int,
    steps: int,
    variant: str,
    perf: str,
    keep: Path | None,
    platform: str = "ib-qdr",
) -> dict:
    counter = [] if variant == "no-plugins" else counter_arguments(stack)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        wrapper = counter
        perf_out = (keep or workdir) / f"perf-{perf}-{variant}.out"
        if perf == "record":
            preload = f" env LD_PRELOAD={message_counter(stack)}" if counter else ""
            wrapper = ["-wrapper", f"perf record -F 499 -g -o {perf_out} --{preload}"]
        elif perf == "stat":
            preload = f" env LD_PRELOAD={message_counter(stack)}" if counter else ""
            events = "task-clock,context-switches,page-faults,syscalls:sys_enter_mmap"
            wrapper = ["-wrapper", f"perf stat -e {events} -o {perf_out} --{preload}"]
        command, env = command_for(stack, case, ranks, steps, variant, wrapper, workdir, platform)
        done = execute(command, env, workdir, timeout=float("inf"))
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        timed = re.search(r"^matching: .*: (\S+) s, hash", done.stdout, re.M)
        if done.returncode not in (0, 2) or not (lines or timed):  # e.g. a deadlock: say so
            why = next((x for x in reversed(done.stderr.splitlines()) if "INFO" in x), "")
            return {"variant": variant, "cpu": done.cpu_time, "failed": why.strip()}
        # bench/matching's line: its simulated time (the workloads' JSON line otherwise)
        result = json.loads(lines[-1]) if lines else {"wall": float(timed.group(1))}
        run = {
            "variant": variant,
            "cpu": done.cpu_time,
            "wall": done.elapsed,
            "rss_gb": (done.peak_rss or 0.0) / 1e9,
            "simulated": simulated_time(done.stderr),
            "program_wall": result.get("wall"),
            "fom": (result.get("fom") or {}).get("value"),
            "messages": simulated_messages(done.stderr),
            "load": os.getloadavg()[0],
            "simgrid": stack.version,
        }
        if perf == "record":
            run["perf"] = perf_groups(perf_out)
        elif perf == "stat":
            run["perf"] = perf_out.read_text()
        return run


def perf_report(data: Path, children: bool) -> list[tuple[float, str, str]]:
    """(percent, dso, symbol) of perf's report: self time, or with callees' (children)."""
    option = "--children" if children else "--no-children"
    command = ["perf", "report", "-i", str(data), option, "--sort", "dso,sym", "--stdio"]
    report = subprocess.run(
        [*command, "-g", "none", "--percent-limit", "0.05"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pattern = (
        r"\s*([0-9.]+)%\s+" + (r"[0-9.]+%\s+" if children else "") + r"(\S+)\s+\[[.k]\]\s+(.*)"
    )
    rows = []
    for line in report.splitlines():
        match = re.match(pattern, line)
        if match:
            rows.append((float(match.group(1)), match.group(2), match.group(3).strip()))
    return rows


def group_of(dso: str, symbol: str) -> str:
    """The part of the simulator (GROUPS) a symbol's self time belongs to; the kernel's
    memory-management work is privatization's, the rest of the kernel its own group."""
    kernel = dso == "[kernel.kallsyms]"
    for group, pattern in GROUPS:
        if kernel and not group.startswith(("privatization", "CPU clock", "dlopen", "the kernel")):
            continue
        if re.search(pattern, symbol) or re.search(pattern, dso):
            return group
    return "kernel, other" if kernel else "other"


def perf_groups(data: Path) -> dict:
    """Self time by symbol (perf report, no children), summed into GROUPS; and the inclusive
    time (children) of the symbols in INCLUSIVE (frame-pointer call chains: exact from the
    kernel up to the system call's libc wrapper, partial in libsimgrid, built without them)."""
    symbols = perf_report(data, children=False)
    groups: dict[str, float] = {}
    for share, dso, symbol in symbols:
        group = group_of(dso, symbol)
        groups[group] = round(groups.get(group, 0.0) + share, 2)
    inclusive = {
        f"{dso} {symbol}": share
        for share, dso, symbol in perf_report(data, children=True)
        if re.search(INCLUSIVE, symbol)
    }
    top = [f"{share:.2f} {dso} {symbol}" for share, dso, symbol in symbols[:40]]
    return {"groups": groups, "top": top, "inclusive": inclusive}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--case", default="homme", choices=sorted(CASES))
    parser.add_argument("--ranks", type=int)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--platform", default="ib-qdr", help="the simulated interconnect")
    parser.add_argument(
        "--computation", help="the computation knob instead of the case's (off: network only)"
    )
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--perf",
        default="none",
        choices=("none", "record", "stat"),
        help="run the first variant listed (default: the base) under perf record or perf stat",
    )
    parser.add_argument(
        "--program-args",
        default="",
        help="more options of the workload, e.g. '--solver bicgstab' (pflotran's fixed folded "
        "counts, no recorded history)",
    )
    parser.add_argument("--json", type=Path, help="append every run's figures here")
    parser.add_argument("--keep", type=Path, help="keep perf's output in this directory")
    parser.add_argument("--regroup", type=Path, help="only group a kept perf record's samples")
    args = parser.parse_args()
    if args.regroup:
        print(json.dumps(perf_groups(args.regroup), indent=1))
        return
    stack = discover_stacks().by_id("smpi")
    case = CASES[args.case]
    case = case | {"program": (*case["program"], *shlex.split(args.program_args))}
    if args.computation:
        case = case | {"computation": args.computation}
    if stack is None or not (build_dir(stack) / program_path(case)).is_file():
        raise SystemExit("the smpi stack is not built: run `esmperf build --stack smpi`")
    ranks = args.ranks or case["ranks"]
    runs: dict[str, list[dict]] = {}
    variants = args.variants.split(",")
    for _ in range(args.repeats):
        for variant in variants:
            for part in variant.split("+"):  # a+b: both changes at once
                if part not in VARIANTS:
                    raise SystemExit(f"unknown variant {part} (variants: {', '.join(VARIANTS)})")
            perf = args.perf if variant == variants[0] else "none"
            run = one_run(stack, case, ranks, args.steps, variant, perf, args.keep, args.platform)
            runs.setdefault(variant, []).append(run)
            print(
                f"  {variant}: {run['cpu']:.1f} s CPU, simulated {run.get('simulated')}, "
                f"{run.get('messages')} messages, {run.get('failed', 'ok')}",
                file=sys.stderr,
            )
            if args.json:
                with args.json.open("a") as out:
                    record = {"case": args.case, "ranks": ranks, "args": args.program_args}
                    out.write(json.dumps(record | run) + "\n")
            if "perf" in run:
                print(json.dumps(run["perf"], indent=1) if perf == "record" else run["perf"])
    if "binary" in case:
        how = "network only"
    elif case.get("computation"):
        how = f"{args.steps} steps, computation {case['computation']}"
    else:
        computation = "folded, computation model" if case["machine"] else "computation measured"
        how = f"{args.steps} steps, {computation}"
    print(
        f"{args.case}, {ranks} ranks, {how}, {args.platform}, {stack.version} {args.program_args}"
    )
    print("| variant | CPU s | simulated s | vs base | program's wall s | messages |")
    print("|---|---:|---:|---:|---:|---:|")
    base = runs.get("base", [None])[0]
    for variant, reps in runs.items():
        reps = [r for r in reps if "failed" not in r] or reps
        if "failed" in reps[0]:
            print(f"| {variant} | {reps[0]['cpu']:.1f} | failed: {reps[0]['failed']} | | | |")
            continue
        simulated = reps[0]["simulated"]
        change = f"{simulated / base['simulated'] - 1:+.2e}" if base else ""
        print(
            f"| {variant} | {spread([r['cpu'] for r in reps])} | {simulated:.9g} | {change} | "
            f"{reps[0]['program_wall']} | {reps[0]['messages']} |"
        )


if __name__ == "__main__":
    main()
