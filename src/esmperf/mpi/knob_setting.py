"""What implements a set of knobs on one stack (`knob_setting`): the library's variables and
launcher options (library_knobs.py), or on the simulated stack smpirun's options and the files
of the simulated cluster (smpi_knobs.py); the files written before a run, and the table of
every knob value that `esmperf knobs` prints."""

from pathlib import Path

from esmperf.mpi import platforms
from esmperf.mpi.knobs import (
    KNOBS,
    SIMULATION_KNOBS,
    KnobSetting,
    Unsupported,
    check_knob,
    implementation_of,
)
from esmperf.mpi.library_knobs import MAPPERS
from esmperf.mpi.smpi_knobs import smpi_setting
from esmperf.mpi.stacks import SMPI, Stack
from esmperf.paths import stack_build_dir

LINK_KNOBS = ("bandwidth_end", "rails", "node_channel")  # written into the platform file


def knob_setting(
    stack: Stack,
    knobs: dict[str, str],
    ranks: int,
    cores: int,
    ranks_per_node: int | None = None,
    platform_dir: Path | None = None,
) -> KnobSetting:
    """The variables and launcher options implementing `knobs` on `stack`; Unsupported with
    the reason when the library cannot honour one of them. On the smpi stack they include the
    platform file and hostfile of the run (written to `platform_dir` by the runner)."""
    impl = implementation_of(stack)
    if stack.simulated:
        return smpi_setting(
            knobs, ranks, ranks_per_node or 1, platform_dir or stack_build_dir(SMPI) / "platforms"
        )
    env: dict[str, str] = {}
    args: list[str] = []
    for name, value in sorted(knobs.items()):
        check_knob(name, value)
        if name in SIMULATION_KNOBS:
            raise Unsupported(
                f"{name} is a knob of the simulated cluster: it needs the smpi "
                "stack (SimGrid SMPI, `esmperf simulate`; docs/simulate.md)"
            )
        mapper = MAPPERS.get(impl.name)
        if mapper is None:
            raise Unsupported(f"no knob mapping for {stack.id} ({impl.name}): {name} unsupported")
        part = mapper(impl, name, value, ranks, cores)
        env.update(part.env)
        args.extend(part.launcher_args)
    return KnobSetting(env, tuple(args))


def write_files(setting: KnobSetting) -> None:
    """Write the files a setting needs (the same text is not rewritten)."""
    for path, text in setting.files:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)


def knob_table(stack: Stack, ranks: int = 2, cores: int = 2) -> list[tuple[str, str, str]]:
    """(knob, value, what implements it or why not) for every knob value: `esmperf knobs`."""
    rows = []
    # a simulated run's options shared by every value (platform file, hostfile...) are not shown
    common = set(knob_setting(stack, {}, ranks, cores).launcher_args) if stack.simulated else set()
    for knob in KNOBS.values():
        for value in knob.values:
            try:
                setting = knob_setting(stack, {knob.name: value}, ranks, cores)
            except Unsupported as reason:
                rows.append((knob.name, value, f"unsupported: {reason}"))
                continue
            parts = [f"{key}={val}" for key, val in setting.env.items()]
            # a knob that changes the platform file changes its name: not shown as an option
            args = [
                arg
                for arg in setting.launcher_args
                if arg not in common and not arg.endswith((".xml", ".hosts"))
            ]
            if stack.simulated and knob.name == "platform":
                net = platforms.interconnect(value)
                high = f"-{net.bandwidth_high / 1e9:.4g}" if net.bandwidth_high else ""
                args = [
                    f"{net.title}: {net.bandwidth / 1e9:.4g}{high} GB/s, "
                    f"{net.latency * 1e6:.3g} us between nodes (-platform <generated>.xml)"
                ]
            if stack.simulated and knob.name in LINK_KNOBS:
                args = [f"{knob.name} = {value} (-platform <generated>.xml)"]
            if stack.simulated and knob.name == "topology":
                args = [f"{platforms.describe_topology(value)} (-platform <generated>.xml)"]
            parts += [" ".join(args)] if args else []
            rows.append((knob.name, value, " ".join(parts) or "(library default)"))
    return rows
