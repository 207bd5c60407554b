"""Study files (TOML, see docs/studies.md): what to run, expanded into configurations
(study/configuration.py).

A study is a list of `[[matrix]]` blocks, each a Cartesian product of its axes (workload, size,
stack, options.*, knobs.*, steps, ranks_per_node, ranks: AXIS_ORDER), with `zip` groups of
axes that advance together; `[defaults]` gives every block its starting values. Each
configuration has a key that depends only on what is run (not on how often), so a study can
be resumed, extended, and compared with another.

This module reads the file and its study-level keys; a block's axes and their product are
matrix.py, the settings that are not axes (launcher, fom, profile, timeout, repeats, env)
block_settings.py: each with one error message naming the fix for every mistake it can hold.
"""

import shutil
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from esmperf.mpi.knobs import KNOBS
from esmperf.mpi.ns3_network import kept_connections
from esmperf.paths import SIMGRID_VARIABLE, simgrid_prefix
from esmperf.slurm.batch import SlurmError, slurm_options
from esmperf.study.block_settings import NAME_PATTERN, check_keys, is_int
from esmperf.study.configuration import Study, StudyError
from esmperf.study.matrix import expand
from esmperf.workloads import Workload, WorkloadError, load_workloads

STUDY_KEYS = (
    "name",
    "title",
    "description",
    "seed",
    "base_ranks",
    "simgrid",
    "metric",
    "defaults",
    "matrix",
    "slurm",
)
MATRIX_KEYS = (
    "workload",
    "name",
    "command",
    "launcher",
    "fom",
    "size",
    "steps",
    "ranks",
    "ranks_per_node",
    "stack",
    "knobs",
    "options",
    "env",
    "zip",
    "timeout",
    "profile",
    "repeats",
)
METRICS = ("fom", "jobs_per_day")


def load_study(
    path: Path,
    default_stacks: Sequence[str] = ("openmpi",),
    workloads: dict[str, Workload] | None = None,
) -> Study:
    """Read, check and expand a study file; StudyError with one clear message otherwise."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StudyError(f"no such study file: {path} (see studies/ for examples)") from None
    except (OSError, UnicodeDecodeError) as error:
        raise StudyError(f"cannot read the study file {path}: {error}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise StudyError(f"{path} is not valid TOML: {error}") from None
    return study_from_dict(data, str(path), text, default_stacks, workloads)


def check_simgrid(wanted: Any, source: str) -> None:
    """A study that names a SimGrid (`simgrid = "simgrid-4.1"`: the prefix `make setup-simgrid`
    builds, e.g. for the ns-3 binding that keeps TCP connections, docs/simulate.md) runs only on
    it: $ESMPERF_SIMGRID must name that prefix, so that its runs' keys say which SimGrid."""
    if wanted is None:
        return
    if not isinstance(wanted, str) or not NAME_PATTERN.match(wanted):
        raise StudyError(f'{source}: simgrid must name a SimGrid prefix, e.g. "simgrid-4.1"')
    prefix = simgrid_prefix()
    if prefix is None or prefix.name != wanted:
        now = f"{SIMGRID_VARIABLE}={prefix}" if prefix else "PATH's SimGrid"
        raise StudyError(
            f"{source} runs on SimGrid {wanted}, not {now}: build it with `make setup-simgrid` "
            f"and run with {SIMGRID_VARIABLE}=$PWD/.venv/{wanted}"
        )


def study_from_dict(
    data: dict[str, Any],
    source: str,
    text: str = "",
    default_stacks: Sequence[str] = ("openmpi",),
    workloads: dict[str, Workload] | None = None,
) -> Study:
    check_keys(data, STUDY_KEYS, source, "the study")
    name = data.get("name")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise StudyError(
            f"{source}: `name` must be a short name of letters, digits, '-', '_' "
            f"or '.' (it names the results file), got {name!r}"
        )
    base_ranks = data.get("base_ranks")
    if base_ranks is not None and (not is_int(base_ranks) or base_ranks < 1):
        raise StudyError(f"{source}: base_ranks must be a positive integer, got {base_ranks!r}")
    check_simgrid(data.get("simgrid"), source)
    metric = data.get("metric", "fom")
    if metric not in METRICS:
        raise StudyError(f"{source}: metric must be one of {', '.join(METRICS)}, got {metric!r}")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise StudyError(f"{source}: [defaults] must be a table")
    check_keys(defaults, [key for key in MATRIX_KEYS if key != "zip"], source, "[defaults]")
    blocks = data.get("matrix")
    if not isinstance(blocks, list) or not blocks or not all(isinstance(b, dict) for b in blocks):
        raise StudyError(
            f"{source}: no [[matrix]] block: a study needs at least one, e.g.\n"
            '[[matrix]]\nworkload = "pop"\nranks = [1, 2, 4]'
        )
    if workloads is None:
        workloads = _load_workloads_for(source)
    study = Study(
        name=name,
        title=str(data.get("title", name)),
        description=str(data.get("description", "")),
        seed=str(data.get("seed", "")),
        base_ranks=base_ranks,
        metric=metric,
        configurations=[],
        source=source,
        text=text,
    )
    try:
        study.slurm = slurm_options(data.get("slurm", {}), source)
    except SlurmError as error:
        raise StudyError(str(error)) from None
    seen: set[str] = set()
    for number, block in enumerate(blocks, start=1):
        where = f"{source}: [[matrix]] {number}"
        check_keys(block, MATRIX_KEYS, source, f"[[matrix]] {number}")
        merged = _merge(defaults, block)
        for configuration in expand(merged, where, number, default_stacks, workloads, study):
            if configuration.key not in seen:
                seen.add(configuration.key)
                study.configurations.append(configuration)
    note_ns3_binding(study)
    return study


def note_ns3_binding(study: Study) -> None:
    """A note when the study's ns3 runs would run on SimGrid's own ns-3 binding (Debian's): a
    TCP connection per message, and runs that can stop with "Deadlock detected"
    (docs/simulate.md, "TCP over Ethernet"); it names esmperf's patched one."""
    if not any(
        c.stack == "smpi" and dict(c.knobs).get("network_model") == "ns3"
        for c in study.configurations
    ):
        return
    prefix = simgrid_prefix()
    smpicc = str(prefix / "bin" / "smpicc") if prefix else shutil.which("smpicc")
    if smpicc is None or not Path(smpicc).is_file() or kept_connections(Path(smpicc)):
        return  # no SimGrid there (its runs are skipped, saying so), or the patched one
    study.notes.append(
        "network_model = ns3 runs on SimGrid's own ns-3 binding here: a TCP connection per "
        'message, and runs that can stop with "Deadlock detected" (docs/simulate.md, "TCP '
        "over Ethernet\"); `make setup-simgrid` builds esmperf's patched binding (connections "
        "kept open), used with ESMPERF_SIMGRID=$PWD/.venv/simgrid-4.1"
    )


def _load_workloads_for(source: str) -> dict[str, Workload]:
    try:
        return load_workloads()
    except WorkloadError as error:
        raise StudyError(f"{source}: {error}") from None


def _merge(defaults: dict[str, Any], block: dict[str, Any]) -> dict[str, Any]:
    merged = dict(defaults)
    for key, value in block.items():
        if (
            key in ("knobs", "options", "env")
            and isinstance(value, dict)
            and isinstance(merged.get(key), dict)
        ):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def baseline_value(knob: str, values: Sequence[str]) -> str:
    """The value gains are measured against: the library default when it is among the
    values, else the first value given."""
    default = KNOBS[knob].baseline if knob in KNOBS else None
    return default if default in values else values[0]
