"""A real run replayed on a simulated cluster: the profiler's trace (trace.py) written as a
SimGrid time-independent (TI) trace, one action file per rank, and `smpirun -replay` on one of
esmperf's platforms (the same smpirun options as `esmperf simulate`, smpi_knobs.smpi_setting).

TI actions (SimGrid 3.32's smpi_replay.cpp; `init` without a datatype: sizes are bytes):
`R init`, `R compute FLOPS`, `R send|isend DST TAG BYTES`, `R recv|irecv SRC TAG BYTES`,
`R wait SRC DST TAG`, `R waitall`, `R barrier`, `R bcast BYTES ROOT`, `R reduce BYTES 0 ROOT`,
`R allreduce BYTES 0`, `R alltoall SEND RECV`, `R allgather SEND RECV`, `R gather SEND RECV
ROOT`, `R scatter SEND RECV ROOT`, `R finalize`. The time between two replayed calls is
computation, converted to flops at `speed` (default the simulated hosts' speed, so a burst costs
there what it cost here): its wall time (`compute="wall"`), or, for a trace recorded with
ESMPROF_TRACE=cpu, the thread's CPU time in it (`compute="cpu"`: what a preempted or
oversubscribed burst really computed; time blocked in I/O or page faults is then not counted).
What SimGrid's replay cannot express is folded into computation with its measured time,
and counted (`not_replayed`): collectives on communicators other than MPI_COMM_WORLD's group,
persistent collectives, matched probes, RMA, MPI-IO, v-collectives, and every call of threads
other than the main one (one simulated actor per rank replays one sequence: several threads'
calls in time order can deadlock). docs/profiler.md ("Replaying a run") lists the other
approximations.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path

from esmperf.errors import EsmperfError
from esmperf.mpi import knobs, platforms, smpi_knobs
from esmperf.profile.trace import CALL, START, Event, RankTrace

SENDS = {"MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend"}
ISENDS = {"MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend"}
SENDRECVS = {"MPI_Sendrecv", "MPI_Sendrecv_replace"}
WAIT_ONE = {"MPI_Wait", "MPI_Waitany", "MPI_Test", "MPI_Testany", "MPI_Waitsome", "MPI_Testsome"}
WAIT_ALL = {"MPI_Waitall", "MPI_Testall"}
PERSISTENT_SENDS = {"MPI_Send_init", "MPI_Bsend_init", "MPI_Ssend_init", "MPI_Rsend_init"}
COLLECTIVES = {
    "MPI_Barrier",
    "MPI_Bcast",
    "MPI_Reduce",
    "MPI_Allreduce",
    "MPI_Alltoall",
    "MPI_Allgather",
    "MPI_Gather",
    "MPI_Scatter",
}
# Calls that take no time worth replaying and are not communication: their time is computation.
LOCAL = re.compile(
    r"MPI_(Comm_(rank|size|get_name|set_name|test_inter|compare|group)|Group_\w+|"
    r"Type_\w+|Get_\w+|Wtime|Wtick|Initialized|Finalized|Query_thread|"
    r"Request_free|Error_\w+|Info_\w+|Op_\w+|Attr_\w+|\w+_get_attr|Iprobe|Probe)$"
)


class ReplayError(EsmperfError):
    """A trace that cannot be replayed, or a replay that failed."""


@dataclass
class TiTrace:
    index: Path  # the file smpirun -replay reads: one rank file per line
    ranks: int
    speed: float  # flop/s the computation was converted at
    compute: str = "wall"  # computation from the gaps' wall time, or CPU time
    messages: int = 0  # send and isend actions
    actions: Counter = field(default_factory=Counter)
    not_replayed: Counter = field(default_factory=Counter)  # MPI function -> calls folded


def base_name(function: str) -> str:
    return function[:-2] if function.endswith("_c") else function


def write_ti(
    traces: list[RankTrace],
    folder: Path,
    speed: float = platforms.HOST_SPEED,
    compute: str = "wall",
) -> TiTrace:
    """The TI trace of `traces` in `folder` (rank-N.txt and traces.txt, the index)."""
    if compute not in ("wall", "cpu"):
        raise ReplayError(f"computation from {compute!r}: choose wall or cpu")
    if compute == "cpu" and not all(t.header.get("cpu") for t in traces):
        raise ReplayError(
            "this trace has no CPU times: record it with ESMPROF_TRACE=cpu "
            "(esmperf profile --trace-cpu), or convert with wall-clock computation"
        )
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("rank-*.txt"):
        old.unlink()
    ranks = len(traces)
    sizes = _send_sizes(traces)
    roots = _roots(traces)
    ti = TiTrace(folder / "traces.txt", ranks, speed, compute)
    paths = []
    for trace in traces:
        lines = _rank_actions(trace, ranks, sizes, roots, ti)
        path = folder / f"rank-{trace.rank}.txt"
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path.resolve()))
    ti.index.write_text("\n".join(paths) + "\n")
    return ti


def _persistent(trace: RankTrace) -> dict[int, tuple[str, int, int]]:
    """Request -> ("isend" or "irecv", peer, tag) of the persistent point-to-point requests made
    (MPI_Send_init, MPI_Recv_init, ...); a handle reused later names its latest request."""
    made = {}
    for e in trace.events:
        name = base_name(e.name)
        if e.kind == CALL and e.req and (name in PERSISTENT_SENDS or name == "MPI_Recv_init"):
            made[e.req] = ("isend" if name in PERSISTENT_SENDS else "irecv", e.peer, e.tag)
    return made


def _send_sizes(traces: list[RankTrace]) -> dict[tuple[int, int, int], deque[int]]:
    """(source, destination, tag) -> the sizes of its messages in order (MPI does not overtake):
    a receive takes its size from the matching send, known on the sending rank."""
    sizes: dict[tuple[int, int, int], deque[int]] = defaultdict(deque)
    for trace in traces:
        made = _persistent(trace)
        for e in trace.events:
            name = base_name(e.name)
            if e.thread != 0:
                continue
            if (
                e.kind == CALL
                and e.peer >= 0
                and (name in SENDS or name in ISENDS or name in SENDRECVS)
            ):
                sizes[(trace.rank, e.peer, e.tag)].append(e.sent)
            elif e.kind == START and made.get(e.req, ("",))[0] == "isend" and e.peer >= 0:
                sizes[(trace.rank, e.peer, made[e.req][2])].append(e.sent)
    return sizes


def _roots(traces: list[RankTrace]) -> dict[tuple[str, int], int]:
    """(collective, occurrence) -> its root: the rank whose k-th call sends (bcast, scatter) or
    receives (reduce, gather); collectives on one communicator run in the same order on every
    rank."""
    roots: dict[tuple[str, int], int] = {}
    for trace in traces:
        seen: Counter = Counter()
        world = trace.world_comms()
        for e in trace.events:
            name = base_name(e.name)
            if (
                e.kind != CALL
                or e.thread != 0
                or e.comm not in world
                or name not in ("MPI_Bcast", "MPI_Scatter", "MPI_Reduce", "MPI_Gather")
            ):
                continue
            k = seen[name]
            seen[name] += 1
            is_root = e.sent > 0 if name in ("MPI_Bcast", "MPI_Scatter") else e.recv > 0
            if is_root:
                roots[(name, k)] = trace.rank
    return roots


def _rank_actions(trace: RankTrace, ranks: int, sizes: dict, roots: dict, ti: TiTrace) -> list[str]:
    me = trace.rank
    out = [f"{me} init"]
    outstanding: dict[
        int, tuple[int, int, int]
    ] = {}  # request -> (src, dst, tag) as SimGrid keys it
    seen: Counter = Counter()
    world = trace.world_comms()
    done = 0  # ns: end of the last replayed call
    cpu = 0.0  # CPU ns since then (compute="cpu")
    made = _persistent(trace)
    calls = [e for e in trace.events if e.kind in (CALL, START) and e.thread == 0]
    for e in trace.events:
        if e.kind == CALL and e.thread != 0:
            ti.not_replayed[f"{base_name(e.name)} (threads)"] += 1
    completion_source = _any_source_completions(calls)

    def recv_size(src: int, tag: int, fallback: int) -> int:
        queue = sizes.get((src, me, tag))
        return queue.popleft() if queue else fallback

    for i, e in enumerate(calls):
        name = base_name(e.name)
        cpu += e.cpu_gap
        if e.kind == START:
            actions = _started(e, me, made, outstanding, recv_size)
        else:
            actions = _actions(
                e,
                name,
                me,
                ranks,
                world,
                outstanding,
                seen,
                roots,
                recv_size,
                completion_source.get(i, -1),
            )
        if actions is None:
            if not LOCAL.match(name):
                ti.not_replayed[name] += 1
            continue
        flops = (cpu if ti.compute == "cpu" else max(0, e.t0 - done)) * 1e-9 * ti.speed
        cpu = 0.0
        if flops >= 1:
            out.append(f"{me} compute {flops:.0f}")
        done = max(done, e.t1)
        for action in actions:
            out.append(f"{me} {action}")
            verb = action.split()[0]
            ti.actions[verb] += 1
            ti.messages += verb in ("send", "isend")
    tail = int(trace.header["wall"] * 1e9) - done
    if tail * 1e-9 * ti.speed >= 1:
        out.append(f"{me} compute {tail * 1e-9 * ti.speed:.0f}")
    out.append(f"{me} finalize")
    return out


def _started(e: Event, me: int, made: dict, outstanding: dict, recv_size) -> list[str]:
    """A persistent request started by MPI_Start(all): its isend or irecv."""
    verb, peer, tag = made.get(e.req, ("", -1, 0))
    if verb == "isend" and e.peer >= 0:
        outstanding[e.req] = (me, e.peer, tag)
        return [f"isend {e.peer} {tag} {e.sent}"]
    if verb == "irecv" and peer >= 0:
        outstanding[e.req] = (peer, me, tag)
        return [f"irecv {peer} {tag} {recv_size(peer, tag, 0) or 1}"]
    return []


def _any_source_completions(calls: list[Event]) -> dict[int, int]:
    """Index of an MPI_ANY_SOURCE MPI_Irecv -> the source its completion reports: the first
    later Wait/Test of its request, or the first later Waitall/Testall that completed a
    receive (exact when that Waitall completed one receive; its last one's source otherwise)."""
    found = {}
    for i, e in enumerate(calls):
        if base_name(e.name) != "MPI_Irecv" or e.peer >= 0:
            continue
        for later in calls[i + 1 :]:
            name = base_name(later.name)
            if (name in WAIT_ONE and later.req == e.req) or (name in WAIT_ALL and later.src >= 0):
                if later.src >= 0:
                    found[i] = later.src
                break
    return found


def _actions(
    e: Event,
    name: str,
    me: int,
    ranks: int,
    world: set[int],
    outstanding: dict,
    seen: Counter,
    roots: dict,
    recv_size,
    any_source: int,
) -> list[str] | None:
    """The TI actions of one call; None when it is not replayed (folded into computation)."""
    if name in SENDS:
        return [f"send {e.peer} {e.tag} {e.sent}"] if e.peer >= 0 else []
    if name in ISENDS:
        if e.peer < 0:
            return []
        outstanding[e.req] = (me, e.peer, e.tag)
        return [f"isend {e.peer} {e.tag} {e.sent}"]
    if name == "MPI_Recv":
        src = e.peer if e.peer >= 0 else e.src
        return [f"recv {src} {e.tag} {recv_size(src, e.tag, e.recv)}"] if src >= 0 else []
    if name == "MPI_Irecv":
        src = e.peer if e.peer >= 0 else any_source
        if src < 0:
            return None  # MPI_ANY_SOURCE completed by a Waitall: source unknown
        outstanding[e.req] = (src, me, e.tag)
        return [f"irecv {src} {e.tag} {recv_size(src, e.tag, 0) or 1}"]
    if name in SENDRECVS:
        out = []
        if e.peer >= 0:
            out += [f"isend {e.peer} {e.tag} {e.sent}"]
        if e.src >= 0:
            out += [f"irecv {e.src} {e.tag} {recv_size(e.src, e.tag, e.recv) or 1}"]
        if e.peer >= 0:
            out += [f"wait {me} {e.peer} {e.tag}"]
        if e.src >= 0:
            out += [f"wait {e.src} {me} {e.tag}"]
        return out
    if name in PERSISTENT_SENDS or name in ("MPI_Recv_init", "MPI_Start", "MPI_Startall"):
        return []  # replayed by the START events of the requests started
    if name in WAIT_ONE:
        key = outstanding.pop(e.req, None) if e.req else None
        return [f"wait {key[0]} {key[1]} {key[2]}"] if key else []
    if name in WAIT_ALL:
        if name == "MPI_Testall" and not e.req:
            return []
        outstanding.clear()
        return ["waitall"]
    if name not in COLLECTIVES or e.comm not in world:
        return None
    k = seen[name]
    seen[name] += 1
    root = roots.get((name, k), 0)
    if name == "MPI_Barrier":
        return ["barrier"]
    if name == "MPI_Bcast":
        return [f"bcast {max(e.sent, e.recv)} {root}"]
    if name == "MPI_Reduce":
        return [f"reduce {e.sent} 0 {root}"]
    if name == "MPI_Allreduce":
        return [f"allreduce {e.sent} 0"]
    if name == "MPI_Alltoall":
        return [f"alltoall {e.sent // ranks} {e.recv // ranks}"]
    if name == "MPI_Allgather":
        return [f"allgather {e.sent} {e.recv // ranks}"]
    if name == "MPI_Gather":
        return [f"gather {e.sent} {e.sent} {root}"]
    return [f"scatter {e.recv} {e.recv} {root}"]  # MPI_Scatter


@dataclass
class Replay:
    simulated_time: float
    messages: int | None  # send and isend actions SimGrid executed (traced)
    command: list[str]


def replay(
    ti: TiTrace,
    platform: str = "gige",
    ranks_per_node: int = 1,
    count_messages: bool = False,
    timeout: float = 3600,
) -> Replay:
    """`smpirun -replay` of the TI trace on esmperf's platform `platform` (one rank per node by
    default), with the options `esmperf simulate` uses; the simulated time it reports."""
    smpirun = "smpirun"
    with tempfile.TemporaryDirectory(prefix="esmperf-replay-") as scratch:
        work = Path(scratch)
        try:
            setting = smpi_knobs.smpi_setting(
                {"platform": platform}, ti.ranks, ranks_per_node, work
            )
        except (knobs.Unsupported, platforms.PlatformError) as error:
            raise ReplayError(f"cannot replay on {platform}: {error}") from None
        for path, text in setting.files:
            path.write_text(text)
        command = [
            smpirun,
            "-np",
            str(ti.ranks),
            *setting.launcher_args,
            f"--cfg=smpi/tmpdir:{work}",
        ]
        if count_messages:
            command += ["-trace-ti", f"--cfg=tracing/filename:{work / 'replayed.txt'}"]
        command += ["-replay", str(ti.index)]
        try:
            run = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=work)
        except FileNotFoundError:
            raise ReplayError("smpirun not found: install SimGrid (make setup)") from None
        found = re.findall(r"Simulated time: ([0-9.eE+-]+) seconds", run.stderr + run.stdout)
        if run.returncode != 0 or not found:
            tail = "\n".join((run.stderr or run.stdout).splitlines()[-5:])
            raise ReplayError(f"smpirun -replay failed (exit {run.returncode}): {tail}")
        messages = None
        if count_messages:
            messages = sum(
                1
                for f in (work / "replayed.txt_files").glob("*")
                for line in f.read_text().splitlines()
                if line.split()[1:2] in (["send"], ["isend"])
            )
        return Replay(float(found[-1]), messages, command)
