"""A profile (profile/read.py) as rows of the store's profile tables."""

import json
from collections import defaultdict
from typing import Any

from esmperf.profile.groups import program_key, programs, rank_ranges
from esmperf.profile.late_sender import profile_late_sender
from esmperf.profile.pop_metrics import profile_efficiency, receive_wait
from esmperf.profile.read import Profile
from esmperf.profile.regions import path_of


def profile_tables(profile: Profile, run_key: str, rep: int) -> dict[str, dict[str, list[Any]]]:
    """A profile as columns of the profile tables (tidy: one row per rank and item)."""
    header = profile.header
    tables: dict[str, dict[str, list[Any]]] = {}

    def add(table: str, **row: Any) -> None:
        columns = tables.setdefault(table, {})
        for name, value in {"run_key": run_key, "rep": rep, **row}.items():
            columns.setdefault(name, []).append(value)

    fortran = header.get("fortran") or {}
    add(
        "profile",
        ranks=int(header["ranks"]),
        mpi_library=str(header.get("mpi_library", "")),
        abi=str(header.get("abi", "")),
        start_epoch=float(header.get("start_epoch", 0.0)),
        bin_width=float((header.get("profiler") or {}).get("bin_width", 1.0)),
        command=json.dumps(header.get("command", [])),
        knobs=json.dumps(header.get("knobs", {}), sort_keys=True),
        fortran_warning=str(fortran.get("warning") or ""),
    )
    for record in profile.ranks:
        rank = int(record["rank"])
        io = record.get("io") or {}
        write, read = io.get("write") or {}, io.get("read") or {}
        overhead = record.get("overhead") or {}
        add(
            "profile_rank",
            rank=rank,
            host=str(record.get("host", "")),
            wall=float(record["wall"]),
            mpi_time=float(record["mpi_time"]),
            io_write_calls=int(write.get("calls", 0)),
            io_write_bytes=int(write.get("bytes", 0)),
            io_write_time=float(write.get("time", 0.0)),
            io_read_calls=int(read.get("calls", 0)),
            io_read_bytes=int(read.get("bytes", 0)),
            io_read_time=float(read.get("time", 0.0)),
            overhead_calls=int(overhead.get("calls", 0)),
            overhead_seconds=float(overhead.get("seconds", 0.0)),
            command=json.dumps(program_key(record, header)[1]),
            appnum=program_key(record, header)[0],
        )
        for function, call in sorted(record["calls"].items()):
            lang = call.get("lang") or {}
            add(
                "profile_function",
                rank=rank,
                function=function,
                calls=int(call.get("calls", 0)),
                time=float(call.get("time", 0.0)),
                time_min=float(call.get("time_min", 0.0)),
                time_max=float(call.get("time_max", 0.0)),
                sent=int(call.get("sent", 0)),
                recv=int(call.get("recv", 0)),
                calls_c=int(lang.get("c", 0)),
                calls_fortran=int(lang.get("fortran", 0)),
                recv_wait_calls=int(call.get("recv_wait", (0, 0.0))[0]),
                recv_wait_time=float(call.get("recv_wait", (0, 0.0))[1]),
            )
            for bucket, messages in call.get("hist", []):
                add(
                    "profile_histogram",
                    rank=rank,
                    function=function,
                    bucket=int(bucket),
                    messages=int(messages),
                )
        peers = record.get("peers") or {}
        for direction in ("sent", "recv"):
            for peer, (nbytes, messages) in sorted(
                (peers.get(direction) or {}).items(), key=lambda item: int(item[0])
            ):
                add(
                    "profile_peer",
                    rank=rank,
                    peer=int(peer),
                    direction=direction,
                    bytes=int(nbytes),
                    messages=int(messages),
                )
        for comm in record.get("comms") or []:
            add(
                "profile_comm",
                rank=rank,
                comm_id=int(comm.get("id", 0)),
                size=int(comm.get("size", 0)),
                name=str(comm.get("name") or ""),
                created_by=str(comm.get("created_by") or ""),
                members=comm.get("members"),
                remote_members=comm.get("remote_members"),
                calls=int(comm.get("calls", 0)),
                time=float(comm.get("time", 0.0)),
                bytes=int(comm.get("bytes", 0)),
            )
        bins = record.get("bins") or {}
        width = float(bins.get("width", 1.0))
        series = {
            name: bins.get(name) or []
            for name in ("mpi_time", "calls", "sent", "recv", "io_write", "io_read", "io_time")
        }
        for index in range(max((len(values) for values in series.values()), default=0)):

            def at(
                name: str, cast: type, index: int = index, series: dict[str, list[Any]] = series
            ) -> Any:
                values = series[name]
                return cast(values[index]) if index < len(values) else cast(0)

            add(
                "profile_bin",
                rank=rank,
                bin=index,
                start=index * width,
                width=width,
                mpi_time=at("mpi_time", float),
                calls=at("calls", int),
                sent=at("sent", int),
                recv=at("recv", int),
                io_write=at("io_write", int),
                io_read=at("io_read", int),
                io_time=at("io_time", float),
            )
    scope, efficiency = profile_efficiency(profile.ranks)
    wait = receive_wait(profile.ranks)
    late = profile_late_sender(profile.path) or {}  # exact, when the run was traced
    if efficiency:
        add(
            "profile_efficiency",
            scope=scope,
            **efficiency.as_dict(),
            receive_wait=wait["time"],
            receive_wait_calls=wait["calls"],
            late_sender=late.get("time"),
            late_sender_calls=late.get("calls"),
            late_receives=late.get("late_receives"),
        )
    for program in programs(profile.ranks, header):
        figures = program["efficiency"] or {}
        add(
            "profile_program",
            program=program["program"],
            command=json.dumps(program["command"]),
            appnum=program["appnum"],
            ranks=rank_ranges(program["ranks"]),
            rank_count=len(program["ranks"]),
            wall=program["wall_time"],
            mpi_time=program["mpi_time"],
            mpi_percent=program["mpi_percent"],
            mpi_time_imbalance=program["mpi_time_imbalance"],
            scope=figures.get("scope"),
            load_balance=figures.get("load_balance"),
            communication_efficiency=figures.get("communication_efficiency"),
            parallel_efficiency=figures.get("parallel_efficiency"),
        )
    tables.update(region_tables(profile, run_key, rep))
    return tables


def region_tables(profile: Profile, run_key: str, rep: int) -> dict[str, dict[str, list[Any]]]:
    """The regions of a profile as columns of the store's tables profile_region (one row per rank
    and region), profile_region_function (per rank, region and function) and
    profile_region_histogram (per rank, region and message-size bucket)."""
    tables: dict[str, dict[str, list[Any]]] = defaultdict(dict)

    def add(table: str, **row: Any) -> None:
        for name, value in {"run_key": run_key, "rep": rep, **row}.items():
            tables[table].setdefault(name, []).append(value)

    for record in profile.ranks:
        rank = int(record["rank"])
        for region in record.get("regions") or []:
            path = path_of(region)
            add(
                "profile_region",
                rank=rank,
                region=path,
                name=str(region.get("name", "")),
                depth=len(region.get("path") or [1]),
                enters=int(region.get("enters", 0)),
                open=int(region.get("open", 0)),
                wall=float(region.get("wall", 0.0)),
                mpi_time=float(region.get("mpi_time", 0.0)),
                calls=int(region.get("calls", 0)),
                sent=int(region.get("sent", 0)),
                recv=int(region.get("recv", 0)),
            )
            waits = region.get("recv_wait") or {}
            for function, figures in sorted((region.get("functions") or {}).items()):
                calls, seconds, sent, recv = figures
                wait_calls, wait_time = waits.get(function, (0, 0.0))
                add(
                    "profile_region_function",
                    rank=rank,
                    region=path,
                    function=function,
                    calls=int(calls),
                    time=float(seconds),
                    sent=int(sent),
                    recv=int(recv),
                    recv_wait_calls=int(wait_calls),
                    recv_wait_time=float(wait_time),
                )
            for bucket, messages in region.get("hist") or []:
                add(
                    "profile_region_histogram",
                    rank=rank,
                    region=path,
                    bucket=int(bucket),
                    messages=int(messages),
                )
    return dict(tables)
