"""Call sites (`esmperf profile --callsites N`, ESMPROF_CALLSITES=N): the profiler counts MPI
calls per stack of N return addresses (object + offset, native/prof/prof_callsite.c); this
module names them with addr2line (function, file and line; the binary needs -g for lines) and
adds them up over the ranks. A site is keyed by its function and named locations, so two
addresses of one line (an unrolled loop) count as one site."""

from __future__ import annotations

import subprocess
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

ET_EXEC = 2  # a non-PIE executable: addr2line takes run-time addresses, not offsets


@cache
def _elf_type(path: str) -> int | None:
    try:
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError:
        return None
    if head[:4] != b"\x7fELF":
        return None
    return int.from_bytes(head[16:18], "little" if head[5] == 1 else "big")


def _lookup_address(path: str, base: int, offset: int) -> int:
    """What addr2line wants for a return address: the call instruction (one byte before), as
    a run-time address in a non-PIE executable, else as an offset from the load base."""
    return (base + offset if _elf_type(path) == ET_EXEC else offset) - 1


def addr2line(path: str, addresses: list[int]) -> dict[int, tuple[str, str, int]]:
    """address -> (function, file, line); '??', '', 0 where unknown (no debug info)."""
    names: dict[int, tuple[str, str, int]] = {}
    if not addresses or _elf_type(path) is None:
        return names
    try:
        run = subprocess.run(
            ["addr2line", "-f", "-C", "-e", path, *map(hex, addresses)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired):
        return names
    lines = run.stdout.splitlines()
    for address, function, place in zip(addresses, lines[0::2], lines[1::2]):
        file, _, line = place.partition(":")
        line = line.split()[0] if line else "0"
        names[address] = (
            function,
            "" if file == "??" else file,
            int(line) if line.isdigit() else 0,
        )
    return names


def _location(
    objects: list[dict[str, Any]],
    frame: list[int],
    names: dict[tuple[str, int], tuple[str, str, int]],
) -> str:
    index, offset = frame
    if index < 0:
        return f"0x{offset:x}"
    obj = objects[index]
    path = obj["path"]
    function, file, line = names.get(
        (path, _lookup_address(path, obj["base"], offset)), ("??", "", 0)
    )
    if file and line:
        return f"{function} {Path(file).name}:{line}"
    return f"{function if function != '??' else Path(path).name}+0x{offset:x}"


def callsites(ranks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every call site of the profile, most MPI time first: {"function", "stack" (locations,
    innermost first), "calls", "time", "sent", "recv", "ranks"}; [] without call sites."""
    wanted: dict[str, set[int]] = defaultdict(set)
    for rank in ranks:
        data = rank.get("callsites")
        if not data:
            continue
        for site in data["sites"]:
            for index, offset in site["frames"]:
                if index >= 0:
                    obj = data["objects"][index]
                    wanted[obj["path"]].add(_lookup_address(obj["path"], obj["base"], offset))
    names = {
        (path, address): name
        for path, addresses in wanted.items()
        for address, name in addr2line(path, sorted(addresses)).items()
    }
    merged: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
    for rank in ranks:
        data = rank.get("callsites")
        if not data:
            continue
        for site in data["sites"]:
            stack = tuple(_location(data["objects"], f, names) for f in site["frames"])
            row = merged.setdefault(
                (site["function"], stack),
                {
                    "function": site["function"],
                    "stack": list(stack),
                    "calls": 0,
                    "time": 0.0,
                    "sent": 0,
                    "recv": 0,
                    "ranks": set(),
                },
            )
            for key in ("calls", "time", "sent", "recv"):
                row[key] += site[key]
            row["ranks"].add(rank["rank"])
    rows = sorted(merged.values(), key=lambda r: (-r["time"], r["function"], r["stack"]))
    for row in rows:
        row["ranks"] = len(row["ranks"])
    return rows
