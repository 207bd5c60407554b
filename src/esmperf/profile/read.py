"""Reading and validating a profile file (see docs/profile-format.md).

The file is JSON Lines: a header, one line per rank, a trailer. It is read line by line, so a
profile of thousands of ranks never has to be parsed as one document.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from esmperf.errors import EsmperfError

FORMAT = "esmperf-profile"
VERSION = 1
RANK_KEYS = ("rank", "wall", "mpi_time", "calls")


class ProfileError(EsmperfError):
    """A profile file that cannot be used; the message says why and what to do."""


@dataclass
class Profile:
    path: Path
    header: dict[str, Any]
    ranks: list[dict[str, Any]]  # one record per world rank, in rank order
    # A run that did not finalise: {"reasons": {rank: "SIGTERM" | "snapshot" | ...},
    # "missing": [ranks with no partial file]}; `ranks` then holds the ranks that wrote one.
    partial: dict[str, Any] | None = None


def read_profile(path: Path) -> Profile:
    """Read and validate a complete profile; raise ProfileError with one clear message."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as file:
            return _read_lines(path, file)
    except FileNotFoundError:
        raise ProfileError(f"no such profile file: {path} (check the path)") from None
    except UnicodeDecodeError:
        raise ProfileError(f"{path} is not an esmperf profile (not UTF-8 text)") from None
    except OSError as error:
        raise ProfileError(f"cannot read {path}: {error.strerror}") from None


def profile_state(path: Path) -> str | None:
    """The header's `state` ("running": the run has not finalised; "complete"), or None when
    there is no readable header."""
    try:
        with Path(path).open(encoding="utf-8") as file:
            return json.loads(file.readline()).get("state")
    except (OSError, ValueError, AttributeError):
        return None


def _read_lines(path: Path, file: TextIO) -> Profile:
    header: dict[str, Any] | None = None
    ranks: dict[int, dict[str, Any]] = {}
    trailer: dict[str, Any] | None = None
    for number, line in enumerate(file, start=1):
        if not line.strip():
            continue
        record = _parse_line(path, number, line)
        if header is None:
            header = _check_header(path, record)
            if header.get("state") == "running":
                return _read_partial(path, header)
        elif trailer is not None:
            raise ProfileError(f"{path} line {number}: data after the trailer line (corrupt file)")
        elif "end" in record:
            trailer = record
        else:
            _add_rank(path, number, record, header["ranks"], ranks)
    if header is None:
        raise ProfileError(f"{path} is empty (no header line): profile the run again")
    size = header["ranks"]
    if trailer is None:
        raise ProfileError(
            f"{path} is truncated: no trailer line ({len(ranks)} of {size} rank lines): "
            "profile the run again"
        )
    missing = [rank for rank in range(size) if rank not in ranks]
    if missing or trailer.get("ranks") != size:
        shown = ", ".join(map(str, missing[:8])) + (" ..." if len(missing) > 8 else "")
        raise ProfileError(
            f"{path} is truncated or corrupt: missing rank lines ({shown or 'trailer count'}"
            f" of {size} ranks): profile the run again"
        )
    return Profile(path, header, [ranks[rank] for rank in range(size)])


def partial_dir(path: Path) -> Path:
    """Where the ranks of a run that did not finalise write what they have (on SIGTERM, SIGINT,
    SIGUSR1, or every ESMPROF_SNAPSHOT_SECONDS): one RANK.jsonl each."""
    return path.with_name(path.name + ".partial")


def _read_partial(path: Path, header: dict[str, Any]) -> Profile:
    size = header.get("ranks")
    if not isinstance(size, int) or size < 1:
        raise ProfileError(f"{path} has no valid rank count on line 1: corrupt header")
    ranks: dict[int, dict[str, Any]] = {}
    directory = partial_dir(path)
    files = sorted(directory.glob("*.jsonl")) if directory.is_dir() else []
    for file in files:
        text = file.read_text(encoding="utf-8")
        if text.strip():
            _add_rank(file, 1, _parse_line(file, 1, text), size, ranks)
    if not ranks:
        raise ProfileError(
            f"{path}: the run did not reach MPI_Finalize (only the start-up marker was written, "
            f"no partial profile in {directory.name}/): it crashed, was killed with SIGKILL or is "
            "still running; set ESMPROF_SNAPSHOT_SECONDS to keep snapshots, or fix the run and "
            "profile it again"
        )
    partial = {
        "reasons": {rank: record.get("partial", "unknown") for rank, record in ranks.items()},
        "missing": [rank for rank in range(size) if rank not in ranks],
    }
    return Profile(path, header, [ranks[rank] for rank in sorted(ranks)], partial)


def _parse_line(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except ValueError as error:
        raise ProfileError(
            f"{path} line {number} is not JSON ({error.msg}): the file is corrupt or not an "
            "esmperf profile"
        ) from None
    if not isinstance(record, dict):
        raise ProfileError(f"{path} line {number} is not a JSON object: not an esmperf profile")
    return record


def _check_header(path: Path, header: dict[str, Any]) -> dict[str, Any]:
    if header.get("format") != FORMAT:
        raise ProfileError(f'{path} is not an esmperf profile (no "format": "{FORMAT}" on line 1)')
    version = header.get("version")
    if not isinstance(version, int):
        raise ProfileError(f"{path} has no valid format version on line 1: corrupt header")
    if version > VERSION:
        raise ProfileError(
            f"{path} was written by a newer esmperf (format version {version}; this esmperf "
            f"reads version {VERSION}): upgrade esmperf"
        )
    if header.get("state") not in ("complete", "running"):
        raise ProfileError(f"{path} has an unknown state {header.get('state')!r}: corrupt header")
    size = header.get("ranks")
    if not isinstance(size, int) or size < 1:
        raise ProfileError(f"{path} has no valid rank count on line 1: corrupt header")
    return header


def _add_rank(
    path: Path, number: int, record: dict[str, Any], size: int, ranks: dict[int, dict[str, Any]]
) -> None:
    lacking = [key for key in RANK_KEYS if key not in record]
    if lacking:
        raise ProfileError(f"{path} line {number} lacks {', '.join(lacking)}: corrupt rank line")
    rank = record["rank"]
    if not isinstance(rank, int) or not 0 <= rank < size:
        raise ProfileError(f"{path} line {number}: rank {rank!r} is outside 0..{size - 1}")
    if rank in ranks:
        raise ProfileError(f"{path} line {number} repeats rank {rank}: the file is corrupt")
    ranks[rank] = record
