"""Each seed study end to end, with what it costs this machine (issue 13: "each finishing here
in under 20 minutes"): `esmperf study studies/seeds/<name>.toml --jobs N --report` into a fresh
store, timed whole.

    .venv/bin/python benchmarks/seed_studies.py [--studies cesm,hycom,...] [--jobs 2]
                                                [--out results] [--resume] [--json out.json]

Printed per study: wall minutes, CPU minutes (the study and every process it waited for: the
MPI runs, the simulators), the load average before and after, and the configurations complete,
failed, timed out and skipped as the store has them. A study whose store already exists is
refused (its cost would be a resumed run's) unless --resume. The stores stay in --out (default
results/, where scripts/seed_table.py reads them). A study file that names a SimGrid
(`simgrid = "simgrid-4.1"`: pflotran-ns3) runs with $ESMPERF_SIMGRID set to .venv/<it>
(`make setup-simgrid`).
"""

import argparse
import json
import math
import os
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.paths import SIMGRID_VARIABLE  # noqa: E402
from esmperf.store.database import Store  # noqa: E402
from esmperf.study.execute import execute  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ESMPERF = Path(sys.executable).parent / "esmperf"
STUDIES = (
    "pflotran",
    "pflotran-ns3",
    "hycom",
    "hycom-ns3",
    "cesm",
    "cesm-ns3",
    "cesm-run",
    "esmf-redist",
    "esmf-redist-nopack",
    "homme-pop",
)
TARGET_MINUTES = 20.0


def statuses(store_path: Path) -> dict[str, int]:
    """Configurations by status, as the store has them."""
    with Store(store_path, read_only=True) as store:
        rows = store.con.execute("SELECT status, count(*) FROM run GROUP BY status").fetchall()
    return {status: count for status, count in rows}


def run_study(name: str, jobs: int, out: Path, resume: bool) -> dict:
    study_file = ROOT / "studies" / "seeds" / f"{name}.toml"
    if not study_file.is_file():
        raise SystemExit(f"no study {study_file}: choose from {', '.join(STUDIES)}")
    store = out / f"{name}.duckdb"
    if store.exists() and not resume:
        raise SystemExit(
            f"{store} exists: its cost would be a resumed run's; remove it, or pass --resume"
        )
    command = [str(ESMPERF), "study", str(study_file), "--jobs", str(jobs), "--out", str(store)]
    env = dict(os.environ)
    simgrid = tomllib.loads(study_file.read_text()).get("simgrid")
    if simgrid:  # a study on `make setup-simgrid`'s SimGrid (e.g. ns3 with kept connections)
        env[SIMGRID_VARIABLE] = str(ROOT / ".venv" / simgrid)
    load = os.getloadavg()[0]
    done = execute([*command, "--report"], env, ROOT, timeout=math.inf)
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-3000:], sep="\n", file=sys.stderr)
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode})")
    return {
        "study": name,
        "jobs": jobs,
        "wall_min": done.elapsed / 60,
        "cpu_min": (done.cpu_time or 0.0) / 60,
        "load_before": load,
        "load_after": os.getloadavg()[0],
        "configurations": statuses(store),
        "store": str(store),
        "last_lines": done.stdout.strip().splitlines()[-3:],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", default=",".join(STUDIES))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "results")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"{'study':12} {'wall min':>9} {'CPU min':>8} {'load':>10}  configurations")
    for name in args.studies.split(","):
        row = run_study(name.strip(), args.jobs, args.out, args.resume)
        rows.append(row)
        verdict = "met" if row["wall_min"] < TARGET_MINUTES else "missed"
        counts = ", ".join(f"{n} {s}" for s, n in sorted(row["configurations"].items()))
        print(
            f"{name:12} {row['wall_min']:9.1f} {row['cpu_min']:8.1f} "
            f"{row['load_before']:4.1f}-{row['load_after']:<4.1f}  {counts}  "
            f"({TARGET_MINUTES:.0f}-min target {verdict})",
            flush=True,
        )
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
