"""Which programs of the smpi stack keep mutable global state (docs/simulate.md, "Mutable
global state"). SimGrid runs every simulated rank in one process; unless the program keeps no
writable global or static variable, each rank needs its own copy of them (privatization, which
costs the simulator at every switch between ranks). `smpi/privatization:no` is safe for a
program only if this check finds nothing.

Read from the built binary (readelf): every data symbol in a writable section that stays
writable once the program is loaded (.data, .bss, thread-local .tdata/.tbss: the simulated ranks
share one thread), not the sections the loader makes read-only (RELRO: .data.rel.ro, .got,
.init_array, ...) nor the loader's own tables (.got.plt, .dynamic). The C runtime's symbols
(RUNTIME_SYMBOLS) are allowed, and so are the globals marked ESM_RANK_INVARIANT (the same value
in every rank). Each symbol is attributed to the static library that defines it (the profiler,
the workload core, the redistribution library) or else to the program. A program the check
passes runs with privatization off (privatization_args): the profiler, the workload core and
the workloads keep their per-rank state in per-rank blocks (native/include/esm_rank_state.h)."""

from __future__ import annotations

import functools
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from esmperf.errors import EsmperfError

# the C runtime's (crtstuff, crt1): its exit flag and handles; libgcc's CPU model (set once by
# its constructor for __builtin_cpu_supports): the same in every rank
RUNTIME_SYMBOLS = frozenset(
    {"completed.0", "__dso_handle", "__TMC_END__", "__data_start", "data_start", "_edata",
     "_end", "__bss_start", "_GLOBAL_OFFSET_TABLE_", "_DYNAMIC", "__cpu_model",
     "__cpu_features2"}
)  # fmt: skip
# the C++ compiler's references to the exception personality and type information
RUNTIME_PREFIXES = ("DW.ref.",)
# writable at load time but not program state: the dynamic loader's tables
LOADER_SECTIONS = frozenset({".got.plt", ".dynamic"})
# globals every rank sets to the same value (ESM_RANK_INVARIANT, native/include/esm_rank_state.h:
# a symbol resolved at first use, the environment read once): shared safely
RANK_INVARIANT_SECTION = "esm_rank_invariant"
# the static libraries linked into the smpi stack's programs, by what they are
LIBRARIES = {
    "prof/libesmprof_sim.a": "profiler",
    "core/libesmcore.a": "workload core",
    "redist/libesmredist.a": "redistribution library",
}


PRIVATIZATION = "--cfg=smpi/privatization:"
NO_PRIVATIZATION = f"{PRIVATIZATION}no"


class GlobalStateError(EsmperfError):
    """The program cannot be inspected; the message says why."""


@dataclass(frozen=True)
class MutableGlobal:
    name: str
    section: str  # .data, .bss, .tdata, .tbss, ...
    size: int  # bytes
    owner: str  # "profiler", "workload core", "redistribution library" or "program"


def mutable_globals(program: Path, build: Path | None = None) -> list[MutableGlobal]:
    """The writable global and static variables of `program` (an ELF binary), sorted by
    owner and name; `build`: the stack's build directory, to attribute them to its libraries."""
    sections, relro = _sections(program)
    owners = _library_symbols(build) if build else {}
    found = set()
    for line in _readelf(program, "--syms", "--wide").splitlines():
        fields = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(fields) < 8 or not fields[0].endswith(":") or fields[3] not in ("OBJECT", "TLS"):
            continue
        if not fields[6].isdigit():  # UND, ABS, COM
            continue
        name, address = fields[7], int(fields[1], 16)
        section = sections.get(int(fields[6]))
        if section is None or section[0] in LOADER_SECTIONS or _runtime(name):
            continue
        if section[0] == RANK_INVARIANT_SECTION:
            continue
        if not section[1] or (section[0] not in (".tdata", ".tbss") and _inside(address, relro)):
            continue
        size = int(fields[2], 0)
        found.add(MutableGlobal(name, section[0], size, owners.get(name, "program")))
    return sorted(found, key=lambda g: (g.owner, g.name, g.section))


def privatization_args(program: Path, launcher_args: tuple[str, ...]) -> tuple[str, ...]:
    """smpirun's options for `program`: SimGrid's privatization off (NO_PRIVATIZATION in place
    of the one the smpi knobs chose for the rank count) when the program keeps no mutable global
    state, else `launcher_args` unchanged."""
    if _keeps_globals(str(program), program.stat().st_mtime_ns):
        return launcher_args
    kept = tuple(arg for arg in launcher_args if not arg.startswith(PRIVATIZATION))
    return (*kept, NO_PRIVATIZATION)


@functools.lru_cache(maxsize=64)
def _keeps_globals(program: str, mtime_ns: int) -> bool:
    return bool(mutable_globals(Path(program)))


def _sections(program: Path) -> tuple[dict[int, tuple[str, bool]], list[tuple[int, int]]]:
    """Section index -> (name, writable); the RELRO ranges (start, end) of the program."""
    sections = {}
    for match in re.finditer(
        r"^\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+(\S*)",
        _readelf(program, "--section-headers", "--wide"),
        re.MULTILINE,
    ):
        sections[int(match.group(1))] = (match.group(2), "W" in match.group(3))
    relro = [
        (int(fields[2], 16), int(fields[2], 16) + int(fields[5], 16))
        for fields in (
            line.split() for line in _readelf(program, "--program-headers", "--wide").splitlines()
        )
        if fields[:1] == ["GNU_RELRO"]
    ]
    return sections, relro


def _runtime(name: str) -> bool:
    return name in RUNTIME_SYMBOLS or name.startswith(RUNTIME_PREFIXES)


def _inside(address: int, ranges: list[tuple[int, int]]) -> bool:
    return any(start <= address < end for start, end in ranges)


def _library_symbols(build: Path) -> dict[str, str]:
    """Data symbol name -> the library (LIBRARIES) that defines it, for the libraries built."""
    owners: dict[str, str] = {}
    for library, owner in LIBRARIES.items():
        if not (build / library).is_file():
            continue
        listing = subprocess.run(
            ["nm", "--defined-only", str(build / library)], capture_output=True, text=True
        ).stdout
        for line in listing.splitlines():
            fields = line.split()
            if len(fields) == 3 and fields[1] in "dDbBvV":
                owners.setdefault(fields[2], owner)
    return owners


def _readelf(program: Path, *options: str) -> str:
    try:
        done = subprocess.run(["readelf", *options, str(program)], capture_output=True, text=True)
    except OSError as error:
        raise GlobalStateError(f"cannot run readelf: {error.strerror} (install binutils)") from None
    if done.returncode != 0:
        raise GlobalStateError(f"{program} is not an ELF program readelf can read")
    return done.stdout


def summary(globals_: list[MutableGlobal], shown: int = 4) -> str:
    """ "none" or "453 (profiler 380: esm_on, ...; program 12: ...)"."""
    if not globals_:
        return "none"
    by_owner: dict[str, list[str]] = {}
    for item in globals_:
        by_owner.setdefault(item.owner, []).append(item.name)
    parts = [
        f"{owner} {len(names)}: {', '.join(names[:shown])}{', ...' if len(names) > shown else ''}"
        for owner, names in sorted(by_owner.items())
    ]
    return f"{len(globals_)} ({'; '.join(parts)})"
