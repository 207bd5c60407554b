"""Call sites (`esmperf profile --callsites N`, ESMPROF_CALLSITES=N): the profiler counts MPI
calls per stack of N return addresses (object + offset, native/prof/prof_callsite.c); this
module names them with addr2line (function, file and line; the binary needs -g for lines) and
adds them up over the ranks. A site is keyed by its function and named locations, so two
addresses of one line (an unrolled loop) count as one site. Without a line, a location is the
function and the return address's offset in it (`main+0x2a`, the start from the object's
symbol table, `nm`); without a symbol, the object and the offset in it (`libfoo.so+0x1c40`)."""

from __future__ import annotations

import bisect
import subprocess
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

ET_EXEC = 2  # a non-PIE executable: addr2line takes run-time addresses, not offsets
MAX_DEPTH = 8  # the deepest stack the profiler records (native/prof/prof_callsite.c)
FUNCTION_TYPES = set("TtWwi")  # nm's letters for code symbols


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


@cache
def function_starts(path: str) -> tuple[list[int], list[tuple[int, str]]]:
    """The object's code symbols, in addr2line's addresses: their sorted starts and, in that
    order, (end, name); from its symbol table, or its dynamic one when stripped; none
    without nm."""
    symbols: dict[int, tuple[int, str]] = {}
    for table in ([], ["-D"]):
        try:
            run = subprocess.run(
                ["nm", "--defined-only", "-S", "-C", *table, path],
                capture_output=True,
                text=True,
                timeout=120,
            )
        except (OSError, subprocess.TimeoutExpired):
            break
        for line in run.stdout.splitlines():
            fields = line.split(maxsplit=3)
            if len(fields) == 4 and fields[2] in FUNCTION_TYPES:
                start, size = int(fields[0], 16), int(fields[1], 16)
                if size and (start not in symbols or symbols[start][0] < start + size):
                    symbols[start] = (start + size, fields[3])
        if symbols:
            break
    starts = sorted(symbols)
    return starts, [symbols[start] for start in starts]


def function_offset(path: str, address: int) -> tuple[str, int] | None:
    """(function, offset of `address` in it) from the object's symbols, None outside them."""
    starts, extents = function_starts(path)
    i = bisect.bisect_right(starts, address) - 1
    if i < 0 or address >= extents[i][0]:
        return None
    return extents[i][1], address - starts[i]


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
    returned = _lookup_address(path, obj["base"], offset) + 1  # the return address
    symbol = function_offset(path, returned)
    if symbol is not None:
        return f"{symbol[0]}+0x{symbol[1]:x}"
    where = f"{Path(path).name}+0x{offset:x}"
    return where if function == "??" else f"{function} ({where})"


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
