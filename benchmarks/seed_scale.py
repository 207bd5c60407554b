"""The seeds' own scale on this machine: each workload simulated (SimGrid SMPI, folded) at the
rank count, node type and problem size of its seed, with what the simulation costs here.

    .venv/bin/python benchmarks/seed_scale.py [--cases homme,pflotran,...] [--repeats 3]
                                              [--computation model|measured|off] [--json out.json]

Cases (issue 11's targets; docs/simulate.md, "The seeds' scale"):
  homme     ne120, 13,824 ranks on 1,728 JUROPA nodes of 8, IB QDR, 2 steps
  homme-rd  the same with the seed's MPI's allreduce (recursive doubling): the homme-pop seed
            study's headline run (issue 27: under 5 minutes and 8 GB)
  pflotran  100_100_100, 384 ranks on 8 Dell R815 nodes of 48, IB QDR, 10 steps
  hycom     glb0.08, 504 ranks on 11 Dell R815 nodes of 48 (the last one half full), IB QDR
  cesm      1deg, 384 ranks on 32 Dell M610 nodes of 12, IB QDR, 4 coupling intervals (+ 1)
  pop       tenth, 2,442 ranks on 306 JUROPA nodes of 8 (the last one with 2), IB QDR, 1 step
            (+ 1 warm-up); each solve's 1,020 iterations: the first 10 simulated, the others
            charged at their simulated time per iteration (--sample-iterations, docs/ocean.md)

STREAM's roofline measurement is off (`stream=off`) where a workload has it: it is not part of
the model's step, and 2,442 simulated ranks would each run it for real.

Each case is one `esmperf simulate ... --fold on` (a study store per case under --out), run
`repeats` times. Printed per case: the simulated time per run and the figure of merit (median
of the repetitions), and the simulator's cost here: real seconds (median [min..max]), peak
resident memory (max), and real microseconds per simulated rank-step. A case whose workload
cannot run at its seed's scale yet is reported with the program's own error.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.store.database import Store  # noqa: E402
from esmperf.store.results import load_results  # noqa: E402

ESMPERF = Path(sys.executable).parent / "esmperf"


@dataclass(frozen=True)
class Case:
    name: str
    workload: str
    size: str
    ranks: int
    ranks_per_node: int
    machine: str
    platform: str
    steps: int | None
    options: tuple[str, ...] = ()  # workload options, NAME=VALUE
    flags: tuple[str, ...] = ()  # more `esmperf simulate` flags (knobs)

    @property
    def nodes(self) -> int:
        return -(-self.ranks // self.ranks_per_node)


CASES = {
    case.name: case
    for case in (
        Case("homme", "homme", "ne120", 13824, 8, "juropa", "ib-qdr", 2),
        # the homme-pop seed study's headline run: the seed's MPI's allreduce (issue 27's target)
        Case(
            "homme-rd",
            "homme",
            "ne120",
            13824,
            8,
            "juropa",
            "ib-qdr",
            2,
            ("stream=0",),  # as the study runs it: no STREAM measurement in 13,824 ranks
            flags=("--knob", "allreduce_algorithm=recursive_doubling"),
        ),
        # 10 of the deck's 50 steps: folded, every step makes the same fixed Newton and Krylov
        # iterations, and 50 took about 20 min a run here (2026-11-25, load 10-14)
        Case("pflotran", "pflotran", "100_100_100", 384, 48, "dell-r815", "ib-qdr", 10),
        Case("hycom", "hycom", "glb0.08", 504, 48, "dell-r815", "ib-qdr", None, ("stream=off",)),
        Case("cesm", "cesm", "1deg", 384, 12, "dell-m610", "ib-qdr", 4),
        Case(
            "pop",
            "pop",
            "tenth",
            2442,
            8,
            "juropa",
            "ib-qdr",
            1,
            ("sample-iterations=10", "stream=off"),
        ),
    )
}


def simulate(case: Case, repeats: int, computation: str, out: Path, timeout: float) -> list[str]:
    command = [
        str(ESMPERF),
        "simulate",
        case.workload,
        "--size",
        case.size,
        "--ranks",
        str(case.ranks),
        "--ranks-per-node",
        str(case.ranks_per_node),
        "--platform",
        case.platform,
        "--machine",
        case.machine,
        "--fold",
        "on",
        "--computation",
        computation,
        "--repeats",
        str(repeats),
        "--timeout",
        str(timeout),
        "--out",
        str(out),
    ]
    if case.steps is not None:
        command += ["--steps", str(case.steps)]
    for option in case.options:
        command += ["--option", option]
    command += list(case.flags)
    subprocess.run(command, check=False)
    return command


def describe(case: Case, store_path: Path, command: list[str]) -> dict:
    with Store(store_path, read_only=True) as store:
        results = load_results(store)
        walls = (
            [
                float(r["wall"])
                for r in results[0].repetitions
                if r["kind"] == "measure" and r["status"] == "ok"
            ]
            if results
            else []
        )
    record = {
        "case": case.name,
        "ranks": case.ranks,
        "nodes": case.nodes,
        "command": " ".join(command),
    }
    if not results or results[0].status != "complete":
        record["error"] = results[0].run["reason"] if results else "no result"
        return record
    result = results[0]
    measured = [r for r in result.repetitions if r["kind"] == "measure" and r["status"] == "ok"]
    seconds = [float(r["elapsed"]) for r in measured]
    cpu = [float(r["simulator_cpu_seconds"]) for r in measured if r["simulator_cpu_seconds"]]
    messages = [int(r["simulator_messages"]) for r in measured if r["simulator_messages"]]
    steps = int(result.run["steps"] or json.loads(result.repetitions[-1]["result"])["steps"])
    record.update(
        {
            "simulated_seconds": statistics.median(walls),
            "fom": result.summary.median if result.summary else None,
            "unit": result.unit,
            "real_seconds": statistics.median(seconds),
            "real_min": min(seconds),
            "real_max": max(seconds),
            "peak_rss_gb": max(result.peak_rss) / 1e9,
            "us_per_rank_step": statistics.median(seconds) / (case.ranks * steps) * 1e6,
            "cpu_seconds": statistics.median(cpu) if cpu else None,
            "cpu_min": min(cpu) if cpu else None,
            "cpu_max": max(cpu) if cpu else None,
            "messages": messages[-1] if messages else None,
            "cpu_us_per_message": statistics.median(cpu) / messages[-1] * 1e6
            if cpu and messages
            else None,
        }
    )
    return record


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--repeats", type=int, default=3)
    # model by default: deterministic, so the repetitions vary only in what the simulation
    # costs here; measured times each kernel's first calls on this machine (folded within 5 %
    # of full at 16 ranks: docs/simulate.md, "Folding")
    parser.add_argument("--computation", default="model", choices=("measured", "model", "off"))
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument(
        "--out", type=Path, help="directory for the study stores (default: a temporary one)"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="seed-scale-"))
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for name in args.cases.split(","):
        case = CASES[name]
        store = out / f"{case.name}.duckdb"
        command = simulate(case, args.repeats, args.computation, store, args.timeout)
        records.append(describe(case, store, command))
    print(
        f"\n{'case':9} {'ranks':>6} {'simulated s':>12} {'figure':>14} {'real s median [min..max]':>26}"
        f" {'peak RSS':>9} {'us/rank-step':>12}"
    )
    for r in records:
        if "error" in r:
            print(f"{r['case']:9} {r['ranks']:>6}  failed: {r['error']}")
            continue
        print(
            f"{r['case']:9} {r['ranks']:>6} {r['simulated_seconds']:>12.4g} "
            f"{r['fom']:>9.4g} {r['unit']:>4} {r['real_seconds']:>9.1f} "
            f"[{r['real_min']:.1f}..{r['real_max']:.1f}]{'':>6} {r['peak_rss_gb']:>7.2f}GB "
            f"{r['us_per_rank_step']:>12.1f}"
        )
        if r["cpu_seconds"] is not None:
            print(
                f"{'':9} simulator CPU {r['cpu_seconds']:.1f} s [{r['cpu_min']:.1f}.."
                f"{r['cpu_max']:.1f}], {r['messages']:,} messages, "
                f"{r['cpu_us_per_message']:.0f} us of CPU per message"
            )
    if args.json:
        args.json.write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
