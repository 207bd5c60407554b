"""Building the native code (native/, CMake + Ninja) once per MPI stack, into build/<stack id>."""

import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from esmperf.errors import EsmperfError
from esmperf.mpi.stacks import Stack
from esmperf.paths import build_root, repo_root, stack_build_dir

TEST_PROGRAMS = ("prof_test_c", "prof_test_f", "prof_test_f08")
CONFIGURED = "esmperf-configure.txt"  # in the build directory: the last successful configure
CONFIGURE_LOG = "esmperf-configure.log"  # its output (the parts it skipped, and why)
NOTHING_TO_DO = "ninja: no work to do"


@dataclass
class BuildResult:
    stack: Stack
    ok: bool
    seconds: float
    log: Path  # the full cmake output
    output_tail: str  # the last lines of it, to show when the build failed

    def skipped(self) -> list[str]:
        """Parts the build left out on purpose, with the reason (cmake's `<stack>: skipped`,
        from this build's output or, when it did not configure, the last configure's)."""
        prefix = f"-- {self.stack.id}: skipped "
        lines = [
            line
            for log in (self.log, build_dir(self.stack) / CONFIGURE_LOG)
            if log.is_file()
            for line in log.read_text(errors="replace").splitlines()
        ]
        return sorted({line.removeprefix(prefix) for line in lines if line.startswith(prefix)})

    def up_to_date(self) -> bool:
        """Nothing was rebuilt: ninja found no work."""
        return self.ok and NOTHING_TO_DO in self.log.read_text(errors="replace")

    def artifacts(self) -> list[Path]:
        """The profiler library and test programs this build produced (for a simulated
        stack, which has neither: the workloads and benchmarks)."""
        directory = build_dir(self.stack)
        if self.stack.simulated:
            programs = [*directory.glob("apps/*/*"), *directory.glob("bench/*")]
            return sorted(
                path
                for path in programs
                if path.is_file() and path.stat().st_mode & 0o111 and path.suffix == ""
            )
        candidates = [directory / "prof" / "libesmprof.so", world_census_path(self.stack)]
        candidates += [directory / "tests" / name for name in TEST_PROGRAMS]
        return [path for path in candidates if path.is_file()]


def build_dir(stack: Stack) -> Path:
    return stack_build_dir(stack.id)


def profiler_path(stack: Stack) -> Path:
    """Where the profiler is built for `stack`: the library preloaded into real MPI programs, or,
    under SimGrid SMPI, the static library linked into every simulated program."""
    name = "libesmprof_sim.a" if stack.simulated else "libesmprof.so"
    return build_dir(stack) / "prof" / name


def world_census_path(stack: Stack) -> Path:
    """Where libesmworld is built for `stack`: preloaded into the repetitions the profiler is
    not in, each process writes its rank and world size (native/prof/world_check.c)."""
    return build_dir(stack) / "prof" / "libesmworld.so"


def profiler_library(stack: Stack) -> Path:
    """The profiler built for `stack`; EsmperfError when it is not built."""
    library = profiler_path(stack)
    if not library.is_file():
        raise EsmperfError(
            f"the profiler is not built for stack {stack.id} ({library} is missing): "
            "run `make build`"
        )
    return library


def build_tool(name: str) -> Path:
    """cmake or ninja: from the venv (PyPI wheels, when the machine has none) or PATH."""
    in_venv = Path(sys.prefix) / "bin" / name
    found = in_venv if in_venv.is_file() else shutil.which(name)
    if not found:
        raise EsmperfError(f"{name} not found: run `make setup` (or `module load {name}`)")
    return Path(found)


def build_stack(stack: Stack) -> BuildResult:
    """Configure and build native/ for `stack` into build/<id>; cmake and ninja only redo what
    changed, so a second run takes a fraction of a second. The configure step runs only when
    its command changed (another compiler, a new build directory): otherwise ninja reruns cmake
    by itself when a CMakeLists.txt changed."""
    source = repo_root() / "native"
    if not (source / "CMakeLists.txt").is_file():
        raise EsmperfError(f"{source / 'CMakeLists.txt'} is missing: the source tree is incomplete")
    directory = build_dir(stack)
    directory.mkdir(parents=True, exist_ok=True)
    configure = [
        str(build_tool("cmake")),
        "-S",
        str(source),
        "-B",
        str(directory),
        "-G",
        "Ninja",
        f"-DCMAKE_MAKE_PROGRAM={build_tool('ninja')}",
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DCMAKE_C_COMPILER={stack.mpicc}",
        f"-DESM_STACK={stack.id}",
        # NOTFOUND tells native/ (check_language) there is no Fortran, rather than any gfortran.
        f"-DCMAKE_Fortran_COMPILER={stack.mpifort or 'NOTFOUND'}",
    ]
    compile_ = [str(build_tool("cmake")), "--build", str(directory)]
    log = build_root() / f"{build_dir(stack).name}-build.log"
    configured = directory / CONFIGURED
    command_line = "\n".join(configure) + "\n"
    fresh = (directory / "CMakeCache.txt").is_file() and _read(configured) == command_line
    started = time.monotonic()
    with log.open("w") as output:
        ok = all(  # stops at the first step that fails
            # in the build directory: smpicc leaves a stray `.o` in the working directory
            # when cmake identifies the compiler
            subprocess.run(
                command,
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=directory,
                env=stack.environment(),
            ).returncode
            == 0
            for command in ([compile_] if fresh else [configure, compile_])
        )
    if ok and not fresh:
        configured.write_text(command_line)
        shutil.copyfile(log, directory / CONFIGURE_LOG)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-25:])
    return BuildResult(stack, ok, time.monotonic() - started, log, tail)


def _read(path: Path) -> str | None:
    return path.read_text() if path.is_file() else None
