"""mpi4py's own test suite with and without the profiler, outcome by outcome: the profiler must
change nothing a program sees.

    .venv/bin/python scripts/mpi4py_suite.py [--stacks openmpi,mpich] [--ranks 1,2] [-k PATTERN]

The suite (test/ of mpi4py's source release, the version installed for each stack) is fetched
once with pip into .venv/mpi4py/suite/. Each rank runs it through unittest and records every
test's outcome (ok, fail, error, skip) in a JSON file; the script prints per stack and rank count
the tests run, the outcomes of each, and every test whose outcome differs with the profiler.
Exit code 1 when any differs. mpi4py per stack as in tests/test_profiler_mpi4py.py (the test
extra's wheel; `make setup-mpi4py` for Debian MPICH).
"""

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.mpi.build import profiler_library  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402
from test_profiler_mpi4py import mpi4py_env, mpi4py_path  # noqa: E402

RANK_RUNNER = r"""
import json, os, sys, unittest
suite_dir, out_dir, pattern, exclude = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
sys.path.insert(0, suite_dir)
from mpi4py import MPI
rank = MPI.COMM_WORLD.Get_rank()
outcomes = {}
class Recorder(unittest.TestResult):
    def startTest(self, test):  # a run that hangs names the test it hangs in
        super().startTest(test)
        with open(os.path.join(out_dir, f"current.{rank}"), "w") as f:
            f.write(test.id())
    def addSuccess(self, test): outcomes[test.id()] = "ok"
    def addFailure(self, test, err): outcomes[test.id()] = "fail"
    def addError(self, test, err): outcomes[test.id()] = "error"
    def addSkip(self, test, reason): outcomes[test.id()] = "skip"
    def addExpectedFailure(self, test, err): outcomes[test.id()] = "xfail"
    def addUnexpectedSuccess(self, test): outcomes[test.id()] = "xpass"
def flat(suite):
    for item in suite:
        yield from (flat(item) if isinstance(item, unittest.TestSuite) else [item])
found = unittest.TestLoader().discover(suite_dir, pattern=pattern, top_level_dir=suite_dir)
words = [w for w in exclude.split(",") if w]
kept = unittest.TestSuite(t for t in flat(found) if not any(w in t.id() for w in words))
kept.run(Recorder())
with open(os.path.join(out_dir, f"outcomes.{rank}.json"), "w") as f:
    json.dump(outcomes, f)
"""


def suite_dir(version: str) -> Path:
    """mpi4py's test/ for `version`, from its source release (pip download, once)."""
    target = ROOT / ".venv" / "mpi4py" / "suite" / version
    if (target / "test" / "mpiunittest.py").is_file():
        return target / "test"
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-binary",
                ":all:",
                "--no-deps",
                "-d",
                scratch,
                f"mpi4py=={version}",
            ],
            check=True,
        )
        archive = next(Path(scratch).glob("mpi4py-*.tar.gz"))
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if "/test/" in m.name]
            tar.extractall(scratch, members=members, filter="data")
        target.mkdir(parents=True, exist_ok=True)
        (Path(scratch) / archive.name.removesuffix(".tar.gz") / "test").rename(target / "test")
    return target / "test"


def run_suite(
    stack,
    ranks: int,
    profiled: bool,
    tests: Path,
    pattern: str,
    exclude: str,
    path: str,
    timeout: float = 1800,
) -> dict:
    with tempfile.TemporaryDirectory() as out:
        env = run_environment(stack, mpi4py_env(stack, path))
        # the suite's own modules on the path of every process, also of the workers that
        # mpi4py.util.pool and mpi4py.futures spawn (they import the test module by name)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(tests)) if p)
        if profiled:
            env["LD_PRELOAD"] = str(profiler_library(stack))
            env["ESMPROF_OUT"] = str(Path(out) / "profile.jsonl")
        command = mpirun_command(
            stack, ranks, [sys.executable, "-c", RANK_RUNNER, str(tests), out, pattern, exclude]
        )
        try:
            run = subprocess.run(
                command,
                env=env,
                cwd=out,
                capture_output=True,
                text=True,
                timeout=timeout,
                start_new_session=True,
            )
            returncode, tail = run.returncode, (run.stdout + run.stderr).strip().splitlines()[-3:]
        except subprocess.TimeoutExpired:
            hung = sorted(
                f"rank {f.suffix[1:]} in {f.read_text()}" for f in Path(out).glob("current.*")
            )
            returncode, tail = None, [f"timed out after {timeout:g} s", *hung]
        outcomes = {}
        for rank in range(ranks):
            file = Path(out) / f"outcomes.{rank}.json"
            outcomes[rank] = json.loads(file.read_text()) if file.is_file() else None
        return {"returncode": returncode, "outcomes": outcomes, "tail": tail}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stacks", default="openmpi,mpich")
    parser.add_argument("--ranks", default="1,2")
    parser.add_argument("-k", "--pattern", default="test_*.py", help="test files (default all)")
    parser.add_argument(
        "--exclude",
        default="test_spawn.",
        help="comma-separated parts of test ids to leave out (default test_spawn.: "
        "Open MPI 4.1's spawn tests hang here without the profiler too)",
    )
    parser.add_argument(
        "--timeout", type=float, default=1800, help="seconds per suite run (default 1800)"
    )
    args = parser.parse_args()
    stacks = {s.id: s for s in discover_stacks().stacks}
    differences = 0
    for stack_id in args.stacks.split(","):
        stack = stacks.get(stack_id)
        path = mpi4py_path(stack) if stack else None
        if path is None:
            print(f"{stack_id}: skipped (no such stack, or no mpi4py for it)")
            continue
        version = subprocess.run(
            [sys.executable, "-c", "import mpi4py; print(mpi4py.__version__)"],
            env=mpi4py_env(stack, path),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        tests = suite_dir(version)
        for ranks in map(int, args.ranks.split(",")):
            common = (tests, args.pattern, args.exclude, path, args.timeout)
            bare = run_suite(stack, ranks, False, *common)
            profiled = run_suite(stack, ranks, True, *common)
            for rank in range(ranks):
                a, b = bare["outcomes"][rank], profiled["outcomes"][rank]
                if a is None or b is None:
                    print(
                        f"{stack_id} {ranks} ranks, rank {rank}: no outcomes "
                        f"(without: exit {bare['returncode']}: {' | '.join(bare['tail'])}; "
                        f"with: exit {profiled['returncode']}: {' | '.join(profiled['tail'])})"
                    )
                    differences += 1
                    continue
                changed = sorted(t for t in a.keys() | b.keys() if a.get(t) != b.get(t))
                differences += len(changed)
                counts = ", ".join(f"{k} {v}" for k, v in sorted(Counter(b.values()).items()))
                print(
                    f"{stack_id} (mpi4py {version}) {ranks} ranks, rank {rank}: {len(b)} tests "
                    f"({counts}); differing with the profiler: {len(changed)}",
                    flush=True,
                )
                for test in changed[:20]:
                    print(f"    {test}: without {a.get(test)}, with {b.get(test)}")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
