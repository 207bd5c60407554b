"""`smpirun -replay` of a time-independent trace (replay.py writes it) on one of esmperf's
platforms, with the smpirun options of `esmperf simulate` (smpi_knobs.smpi_setting), or on the
trace's own platform (OWN): its ranks on one node whose loopback has this machine's
shared-memory figures (platforms.LOOPBACK_*). A replay that deadlocks (smpirun says "Deadlock
detected" and still exits 0) or that SimGrid rejects fails with SimGrid's message: never a
simulated time."""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from esmperf.mpi import knobs, platforms, smpi_knobs
from esmperf.profile.replay import ReplayError, TiTrace

OWN = "own"  # replay(platform=OWN): the platform the trace was taken on (one node here)


@dataclass
class Replay:
    simulated_time: float
    messages: int | None  # send and isend actions SimGrid executed (traced)
    command: list[str]


def own_platform(ti: TiTrace) -> tuple[str, int]:
    """(interconnect, ranks per node) of the platform the trace was taken on: its ranks on one
    node, talking through the node's loopback (this machine's shared-memory figures,
    platforms.LOOPBACK_*), so the interconnect is never used. Traces from several hosts: the
    interconnect between them is not known."""
    if ti.hosts > 1:
        raise ReplayError(
            f"the trace was taken on {ti.hosts} hosts: esmperf does not know their "
            f"interconnect; name one (--replay {', '.join(platforms.INTERCONNECTS)}) with "
            f"--ranks-per-node {ti.ranks_per_host}"
        )
    return next(iter(platforms.INTERCONNECTS)), ti.ranks


def replay(
    ti: TiTrace,
    platform: str = "gige",
    ranks_per_node: int = 1,
    count_messages: bool = False,
    timeout: float = 3600,
) -> Replay:
    """`smpirun -replay` of the TI trace on esmperf's platform `platform` (one rank per node by
    default; OWN: the trace's own, own_platform), with the options `esmperf simulate` uses; the
    simulated time it reports. A deadlock or an error of SimGrid raises ReplayError."""
    check_replay(platform, ranks_per_node)
    if platform == OWN:
        platform, ranks_per_node = own_platform(ti)
    with tempfile.TemporaryDirectory(prefix="esmperf-replay-") as scratch:
        work = Path(scratch)
        try:
            setting = smpi_knobs.smpi_setting(
                {"platform": platform}, ti.ranks, ranks_per_node, work
            )
        except (knobs.Unsupported, platforms.PlatformError, ValueError) as error:
            raise ReplayError(f"cannot replay on {platform}: {error}") from None
        for path, text in setting.files:
            path.write_text(text)
        command = [
            "smpirun",
            "-np",
            str(ti.ranks),
            *setting.launcher_args,
            f"--cfg=smpi/tmpdir:{work}",
        ]
        if count_messages:
            command += ["-trace-ti", f"--cfg=tracing/filename:{work / 'replayed.txt'}"]
        command += ["-replay", str(ti.index.resolve())]
        try:
            run = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=work)
        except FileNotFoundError:
            raise ReplayError("smpirun not found: install SimGrid (make setup)") from None
        except subprocess.TimeoutExpired:
            raise ReplayError(f"smpirun -replay ran past {timeout:.0f} s: stopped") from None
        simulated = simulated_time(run.returncode, run.stdout + run.stderr)
        messages = None
        if count_messages:
            messages = sum(
                1
                for f in (work / "replayed.txt_files").glob("*")
                for line in f.read_text().splitlines()
                if line.split()[1:2] in (["send"], ["isend"])
            )
        return Replay(simulated, messages, command)


def check_replay(platform: str, ranks_per_node: int = 1) -> None:
    """One clear error for a platform --replay does not know (naming those it does), or for
    fewer than one rank per node."""
    if platform != OWN and platform not in platforms.INTERCONNECTS:
        raise ReplayError(
            f"unknown platform {platform!r} for --replay (platforms: {OWN} (the trace's own), "
            f"{', '.join(platforms.INTERCONNECTS)}; see docs/simulate.md)"
        )
    if ranks_per_node < 1:
        raise ReplayError(f"--ranks-per-node {ranks_per_node}: give 1 or more ranks per node")


def simulated_time(returncode: int, output: str) -> float:
    """The simulated time smpirun -replay printed; ReplayError with SimGrid's own message when
    it deadlocked (smpirun still exits 0 then) or failed."""
    if "Deadlock detected" in output:
        stuck = sorted({int(r) for r in re.findall(r"Actor \d+ \((\d+)@", output)})
        waiting = ", ".join(map(str, stuck)) or "unknown"
        raise ReplayError(
            f"the replay deadlocked (SimGrid: Deadlock detected; ranks still waiting: "
            f"{waiting}): the trace's sends, receives or collectives do not match up, so "
            "there is no simulated time"
        )
    found = re.findall(r"Simulated time: ([0-9.eE+-]+) seconds", output)
    if returncode != 0 or not found:
        raise ReplayError(
            f"smpirun -replay failed (exit {returncode}), no simulated time: {_first_error(output)}"
        )
    return float(found[-1])


def _first_error(output: str) -> str:
    """SimGrid's first critical or error line, else the output's last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        if re.search(r"/(CRITICAL|ERROR)\]|Assertion|terminate called|xbt_die", line):
            return re.sub(r"^\[[^\]]*\] (\S+:\d+: )?", "", line)
    return lines[-1] if lines else "(no output)"
