"""Where the simulator's time goes (docs/simulate.md, "Where the simulator's time goes"): one
mid-size folded case run under SimGrid SMPI with the settings of every simulated run at scale
(mpi/smpi_knobs.py), then with one SimGrid option changed at a time, each run's CPU seconds,
simulated time and message count side by side; optionally the base run under `perf record`
(its CPU by symbol, grouped by the simulator's parts) and `perf stat`.

    .venv/bin/python benchmarks/simulator_profile.py [--case homme|pflotran] [--ranks N]
        [--steps 2] [--variants base,privatization-dlopen,...] [--repeats 1]
        [--perf record|stat|none] [--json FILE]

Cases (computation = model, folded, so every simulated time is deterministic):
  homme     homme ne120, --stream 0, JUROPA nodes (8 ranks a node), IB QDR; default 1,024 ranks
  pflotran  pflotran 100_100_100, --stream-mb 0, Dell R815 nodes (48 a node), IB QDR; 384 ranks
Variants: the SMPI option appended after the run's own (SimGrid keeps the last value given).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.launch.smpirun import counter_arguments, message_counter  # noqa: E402
from esmperf.launch.smpirun import simulated_messages, simulated_time  # noqa: E402
from esmperf.mpi.build import build_dir  # noqa: E402
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
}
# one option changed at a time against the base (the flags of every simulated run at scale)
VARIANTS = {
    "base": (),
    "no-counter": (),  # the base without the message counter: what counting costs
    "privatization-dlopen": ("--cfg=smpi/privatization:dlopen",),
    "privatization-no": ("--cfg=smpi/privatization:no",),
    "precision-1e-9": ("--cfg=surf/precision:1e-9",),
    "precision-1e-5": ("--cfg=surf/precision:1e-5",),
    "optim-full": ("--cfg=network/optim:Full",),
    "detached-65536": ("--cfg=smpi/send-is-detached-thresh:65536",),
    "allreduce-rdb": ("--cfg=smpi/allreduce:rdb",),
    "contexts-ucontext": ("--cfg=contexts/factory:ucontext",),
}
# perf's symbols grouped by the part of the simulator (or the program) they belong to; the
# first pattern that matches a "dso symbol" line wins
GROUPS = (
    (
        "privatization and memory maps",
        r"smpi_switch_data_segment|mmap|munmap|mprotect|"
        r"vma|page|pte|pmd|tlb|memcg|lru|folio|fault|rmap|mm_|clear_page|copy_page",
    ),
    (
        "context switching",
        r"[Cc]ontext|swapcontext|raw_swap|ActorImpl::(yield|resume)|"
        r"sigprocmask|simcall|Maestro|run_all_actors|schedule",
    ),
    (
        "network model solver (lmm)",
        r"lmm::|maxmin|Constraint|Variable|Element|"
        r"NetworkCm02|NetworkModel|LinkImpl|resource::|Action|next_occurring_event|"
        r"update_actions|solve|share_resources|heap|Heap",
    ),
    (
        "mailboxes and detached-send lists",
        r"MailboxImpl|CommImpl|comm_|_List_node|list<|"
        r"std::__cxx11::list|ActivityImpl",
    ),
    (
        "MPI matching and SMPI requests",
        r"smpi::|Request::|smpi_|Datatype|Comm::|colls::|"
        r"Coll_|PMPI_|MPI_",
    ),
    ("the workload's own code", r"^(homme|pflotran|libm)"),
    ("allocation", r"malloc|free|_int_|operator new|operator delete|cfree|tcache"),
)


def command_for(
    stack, case: dict, ranks: int, steps: int, variant: str, wrapper: list[str], workdir: Path
) -> tuple[list[str], dict[str, str]]:
    knobs = {"platform": "ib-qdr", "machine": case["machine"], "computation": "model", "fold": "on"}
    setting = knob_setting(stack, knobs, ranks, 2, case["ranks_per_node"], workdir / "platforms")
    write_files(setting)
    name, *args = case["program"]
    program = [str(build_dir(stack) / "apps" / name / name), *args, "--steps", str(steps)]
    launcher = [*wrapper, *setting.launcher_args, *VARIANTS[variant]]
    env = run_environment(stack, os.environ) | setting.env | {"TMPDIR": str(workdir)}
    return mpirun_command(stack, ranks, program, launcher), env


def one_run(stack, case: dict, ranks: int, steps: int, variant: str, perf: str) -> dict:
    counter = [] if variant == "no-counter" else counter_arguments(stack)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        wrapper = counter
        perf_out = workdir / "perf.out"
        if perf == "record":
            preload = f" env LD_PRELOAD={message_counter(stack)}" if counter else ""
            wrapper = ["-wrapper", f"perf record -F 499 -g -o {perf_out} --{preload}"]
        elif perf == "stat":
            preload = f" env LD_PRELOAD={message_counter(stack)}" if counter else ""
            events = "task-clock,context-switches,page-faults,syscalls:sys_enter_mmap"
            wrapper = ["-wrapper", f"perf stat -e {events} -o {perf_out} --{preload}"]
        command, env = command_for(stack, case, ranks, steps, variant, wrapper, workdir)
        done = execute(command, env, workdir, timeout=float("inf"))
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode not in (0, 2) or not lines:
            raise SystemExit(f"{variant} failed ({done.returncode}):\n{done.stderr[-2000:]}")
        result = json.loads(lines[-1])
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
        }
        if perf == "record":
            run["perf"] = perf_groups(perf_out)
        elif perf == "stat":
            run["perf"] = perf_out.read_text()
        return run


def perf_groups(data: Path) -> dict:
    """Self time by symbol (perf report, no children), and summed into GROUPS."""
    report = subprocess.run(
        [
            "perf",
            "report",
            "-i",
            str(data),
            "--no-children",
            "--sort",
            "dso,sym",
            "--stdio",
            "-g",
            "none",
            "--percent-limit",
            "0.05",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    symbols = []
    for line in report.splitlines():
        match = re.match(r"\s*([0-9.]+)%\s+(\S+)\s+\[[.k]\]\s+(.*)", line)
        if match:
            symbols.append((float(match.group(1)), f"{match.group(2)} {match.group(3).strip()}"))
    groups: dict[str, float] = {}
    for share, symbol in symbols:
        dso, _, name = symbol.partition(" ")
        group = next(
            (
                g
                for g, pattern in GROUPS
                if re.search(
                    pattern,
                    name
                    if dso != "[kernel.kallsyms]" or g == "privatization and memory maps"
                    else "~",
                )
                or re.search(pattern, dso)
            ),
            "kernel, other" if dso == "[kernel.kallsyms]" else "other",
        )
        groups[group] = groups.get(group, 0.0) + share
    return {"groups": groups, "top": symbols[:30]}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--case", default="homme", choices=sorted(CASES))
    parser.add_argument("--ranks", type=int)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--perf",
        default="none",
        choices=("none", "record", "stat"),
        help="run the base under perf record or perf stat",
    )
    parser.add_argument("--json", type=Path, help="append every run's figures here")
    args = parser.parse_args()
    stack = discover_stacks().by_id("smpi")
    case = CASES[args.case]
    if stack is None or not (build_dir(stack) / "apps" / case["program"][0]).is_dir():
        raise SystemExit("the smpi stack is not built: run `esmperf build --stack smpi`")
    ranks = args.ranks or case["ranks"]
    runs: dict[str, list[dict]] = {}
    for _ in range(args.repeats):
        for variant in args.variants.split(","):
            if variant not in VARIANTS:
                raise SystemExit(f"unknown variant {variant} (variants: {', '.join(VARIANTS)})")
            perf = args.perf if variant == "base" and args.perf != "none" else "none"
            run = one_run(stack, case, ranks, args.steps, variant, perf)
            runs.setdefault(variant, []).append(run)
            print(
                f"  {variant}: {run['cpu']:.1f} s CPU, simulated {run['simulated']}, "
                f"{run['messages']} messages, load {run['load']:.1f}",
                file=sys.stderr,
            )
            if args.json:
                with args.json.open("a") as out:
                    out.write(json.dumps({"case": args.case, "ranks": ranks, **run}) + "\n")
            if "perf" in run:
                print(json.dumps(run["perf"], indent=1) if perf == "record" else run["perf"])
    print(f"{args.case}, {ranks} ranks, {args.steps} steps, folded, computation model, ib-qdr")
    print("| variant | CPU s | simulated s | vs base | program's wall s | messages |")
    print("|---|---:|---:|---:|---:|---:|")
    base = runs.get("base", [None])[0]
    for variant, reps in runs.items():
        simulated = reps[0]["simulated"]
        change = f"{simulated / base['simulated'] - 1:+.2e}" if base else ""
        print(
            f"| {variant} | {spread([r['cpu'] for r in reps])} | {simulated:.9g} | {change} | "
            f"{reps[0]['program_wall']} | {reps[0]['messages']} |"
        )


if __name__ == "__main__":
    main()
