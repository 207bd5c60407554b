"""SimGrid SMPI (the smpi stack, docs/simulate.md): simulated time is exact and deterministic
(a ping-pong gives latency + n/bandwidth under the CM02 model), the workloads run unmodified
and give the same bits as on a real MPI, the interconnects order as they should, user errors
are one clear message, and the study runner stores simulated runs. Skipped without SimGrid."""

import json
import os
import statistics
import subprocess
import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from conftest import simulate_plan
from esmperf.cli import main
from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.launch.smpirun import simulated_time
from esmperf.mpi import platforms
from esmperf.mpi.build import build_dir
from esmperf.mpi.collectives import SMPI_ALGORITHMS
from esmperf.mpi.knob_setting import knob_setting, knob_table, write_files
from esmperf.mpi.knobs import KNOBS, SIMULATION_KNOBS, KnobSetting, Unsupported
from esmperf.mpi.platforms import INTERCONNECTS, MESSAGE_OVERHEAD_BYTES, PlatformError
from esmperf.mpi.stacks import Stack, discover_stacks
from esmperf.report.analysis import build_groups
from esmperf.report.group_figures import group_figures
from esmperf.store.database import Store
from esmperf.store.results import load_results
from esmperf.study.cli_simulate import KNOB_FLAGS
from esmperf.study.file import study_from_dict
from esmperf.study.orchestrate import run_study
from esmperf.workloads import load_workloads, parse_result_line
from ocean_smpi import smpi_built

QUIET = Console(file=open(os.devnull, "w"))  # noqa: SIM115
SIZES = (0, 8, 1024, 65536, 1048576, 4194304)


@pytest.fixture(scope="module")
def smpi() -> Stack:
    return smpi_built(Path("bench") / "pingpong")


def simulate(
    stack: Stack,
    tmp_path: Path,
    program: list[str],
    ranks: int,
    ranks_per_node: int = 1,
    **knobs: str,
) -> subprocess.CompletedProcess[str]:
    setting = knob_setting(stack, knobs, ranks, 2, ranks_per_node, tmp_path / "platforms")
    return run_setting(stack, tmp_path, program, ranks, setting)


def run_setting(
    stack: Stack, tmp_path: Path, program: list[str], ranks: int, setting: KnobSetting
) -> subprocess.CompletedProcess[str]:
    write_files(setting)
    command = mpirun_command(stack, ranks, program, setting.launcher_args)
    env = run_environment(stack) | {"TMPDIR": str(tmp_path)}
    result = subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result


def pingpong(stack: Stack, tmp_path: Path, platform: str) -> list[float]:
    return pingpong_record(stack, tmp_path, 2, platform=platform)["one_way_s"]


def pingpong_program(stack: Stack) -> list[str]:
    return [str(build_dir(stack) / "bench" / "pingpong"), "100", *map(str, SIZES)]


# The network model's tests run under SMPI's own protocol (eager_limit = simgrid): their expected
# figures are the network model's, not the MPI's eager sends (tests/test_eager.py).
NETWORK_ONLY = {"computation": "off", "eager_limit": "simgrid"}


def pingpong_record(stack: Stack, tmp_path: Path, ranks: int, **knobs: str) -> dict[str, Any]:
    """bench/pingpong on `ranks` nodes (rank r plays with r + ranks/2), network only
    (NETWORK_ONLY)."""
    result = simulate(stack, tmp_path, pingpong_program(stack), ranks, **NETWORK_ONLY | knobs)
    return pingpong_output(result)


def pingpong_between(
    stack: Stack, tmp_path: Path, nodes: int, pair: tuple[int, int], **knobs: str
) -> tuple[list[float], Path]:
    """Ranks 0 and 1 on nodes pair[0] and pair[1] of a cluster of `nodes` nodes: the one-way
    times and the platform file."""
    setting = knob_setting(stack, NETWORK_ONLY | knobs, nodes, 2, 1, tmp_path / "platforms")
    hosts = "".join(f"{platforms.NODE_PREFIX}{node}\n" for node in pair)
    setting = replace(
        setting,
        files=tuple(
            (path, hosts if path.suffix == ".hosts" else text) for path, text in setting.files
        ),
    )
    result = run_setting(stack, tmp_path, pingpong_program(stack), 2, setting)
    xml = next(path for path, _ in setting.files if path.suffix == ".xml")
    return pingpong_output(result)["one_way_s"], xml


def pingpong_output(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    record = json.loads(result.stdout.strip().splitlines()[-1])
    assert record["bytes"] == list(SIZES)
    return record


def link_figures(xml: Path) -> tuple[float, float]:
    """(bandwidth in bytes/s, latency in s) of every link of a generated platform file."""
    cluster = ElementTree.parse(xml).getroot().find("zone/cluster")
    assert cluster is not None
    return float(cluster.get("bw", "").removesuffix("Bps")), float(cluster.get("lat", "")[:-1])


def run_workload(
    stack: Stack, tmp_path: Path, name: str, ranks: int, ranks_per_node: int, **knobs: str
) -> dict[str, Any]:
    program = [str(load_workloads()[name].executable_path(stack.id)), "--size", "S", "--steps", "3"]
    result = simulate(stack, tmp_path, program, ranks, ranks_per_node, **knobs)
    record = parse_result_line(result.stdout)
    assert record is not None, result.stdout[-2000:]
    record["simulated_time"] = simulated_time(result.stderr)
    return record


# -- platform files (no SimGrid needed) --------------------------------------------------------


def test_platform_file_halves_the_latency_per_link_and_places_ranks_in_blocks() -> None:
    xml = platforms.platform_xml(INTERCONNECTS["ib-qdr"], nodes=4, cores=2)
    assert 'radical="0-3"' in xml and 'core="2"' in xml
    # ConnectX-2's PCIe 2.0 x8 slot (links.py); 1.3 us over two links
    assert 'bw="3368421052.63158Bps"' in xml and 'lat="6.5e-07s"' in xml
    assert 'sharing_policy="SPLITDUPLEX"' in xml
    assert platforms.hostfile(5, 2) == "node-0\nnode-0\nnode-1\nnode-1\nnode-2\n"
    assert platforms.nodes_for(5, 2) == 3


def test_topologies_wire_the_cluster_and_name_their_files() -> None:
    net = INTERCONNECTS["ib-qdr"]
    # the crossbar is the default: the same bytes as before topologies existed
    assert (
        platforms.platform_xml(net, 4, 2)
        == platforms.platform_xml(net, 4, 2, "crossbar")
        == (
            "<?xml version='1.0'?>\n"
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            "<!-- esmperf platform ib-qdr: InfiniBand QDR 4x, 4 nodes x 2 cores, non-blocking "
            "crossbar (docs/simulate.md) -->\n"
            '<platform version="4.1">\n<zone id="world" routing="Full">\n'
            '  <cluster id="ib-qdr"\n           prefix="node-"\n           suffix=""\n'
            '           radical="0-3"\n           speed="1000000000f"\n           core="2"\n'
            '           bw="3368421052.63158Bps"\n           lat="6.5e-07s"\n'
            '           sharing_policy="SPLITDUPLEX"\n           loopback_bw="10000000000Bps"\n'
            '           loopback_lat="2e-07s"/>\n</zone>\n</platform>\n'
        )
    )
    # 6 nodes on leaves of 4: two leaves (2 idle nodes in the second), 2:1 = 2 spines
    tree = platforms.platform_xml(net, 6, 1, "fat-tree-2to1")
    assert 'topology="FAT_TREE"' in tree and 'topo_parameters="2;4,2;1,2;1,1"' in tree
    assert 'radical="0-7"' in tree and 'lat="6.5e-07s"' in tree  # the crossbar's links
    assert 'topo_parameters="2;4,2;1,4;1,1"' in platforms.platform_xml(net, 8, 1, "fat-tree-1to1")
    assert 'topo_parameters="2;4,1;1,1;1,1"' in platforms.platform_xml(net, 3, 1, "fat-tree-4to1")
    torus = platforms.platform_xml(net, 16, 1, "torus")
    assert 'topo_parameters="4,2,2"' in torus and 'lat="1.3e-06s"' in torus  # a hop: the latency
    assert [platforms.torus_dimensions(n) for n in (1, 2, 6, 7, 8, 12, 64, 1024)] == [
        (1,),
        (2,),
        (3, 2),
        (7,),
        (2, 2, 2),
        (3, 2, 2),
        (4, 4, 4),
        (16, 8, 8),
    ]
    names = {platforms.platform_name(net, 8, 1, name) for name in platforms.TOPOLOGIES}
    assert len(names) == len(platforms.TOPOLOGIES) and "ib-qdr-8n1c" in names
    with pytest.raises(
        PlatformError,
        match=r"unknown topology 'fat-tree-3to1' \(topologies: "
        "crossbar, fat-tree-1to1, fat-tree-2to1, fat-tree-4to1, torus; see",
    ):
        platforms.platform_xml(net, 4, 1, "fat-tree-3to1")


def test_simulation_knobs_are_unsupported_on_real_stacks_with_the_reason() -> None:
    real = Stack(
        id="openmpi",
        family="openmpi",
        mpicc=Path("/bin/mpicc"),
        mpifort=None,
        mpirun=Path("/bin/mpirun"),
        bin_dir=Path("/bin"),
        version="Open MPI v4.1.4",
    )
    with pytest.raises(Unsupported, match="needs the smpi stack"):
        knob_setting(real, {"platform": "ib-qdr"}, 2, 2)
    with pytest.raises(Unsupported, match="needs the smpi stack"):
        knob_setting(real, {"topology": "torus"}, 2, 2)
    assert set(KNOBS["platform"].values) >= {"gige", "10gige", "ib-qdr", "ib-hdr"}


# -- SimGrid runs ------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", ["gige", "10gige", "ib-qdr"])
def test_pingpong_is_latency_plus_size_over_bandwidth(
    smpi: Stack, tmp_path: Path, platform: str
) -> None:
    net = INTERCONNECTS[platform]
    one_way = pingpong(smpi, tmp_path, platform)
    for size, simulated in zip(SIZES, one_way):
        analytic = net.latency + (size + MESSAGE_OVERHEAD_BYTES) / net.bandwidth
        # exact up to the 10 ns SMPI charges per MPI_Wtime (2 calls over 200 messages)
        assert simulated == pytest.approx(analytic, rel=1e-9, abs=2e-10), (size, simulated)


def test_fat_tree_pingpong_under_one_leaf_is_the_crossbar_and_across_leaves_crosses_four_links(
    smpi: Stack, tmp_path: Path
) -> None:
    # 8 nodes: leaf 0 has nodes 0-3, leaf 1 nodes 4-7
    crossbar, _ = pingpong_between(smpi, tmp_path, 8, (4, 7), platform="ib-qdr")
    within, _ = pingpong_between(
        smpi, tmp_path, 8, (4, 7), platform="ib-qdr", topology="fat-tree-2to1"
    )
    across, xml = pingpong_between(
        smpi, tmp_path, 8, (0, 7), platform="ib-qdr", topology="fat-tree-2to1"
    )
    assert within == crossbar
    bandwidth, latency = link_figures(xml)
    for size, simulated in zip(SIZES, across):
        # node -> leaf -> spine -> leaf -> node: two links more than under one leaf
        analytic = 4 * latency + (size + MESSAGE_OVERHEAD_BYTES) / bandwidth
        assert simulated == pytest.approx(analytic, rel=1e-9, abs=2e-10), (size, simulated)


def test_blocking_fat_tree_gives_pairs_across_leaves_a_share_of_the_bandwidth(
    smpi: Stack, tmp_path: Path
) -> None:
    # 8 nodes, 2 leaves; rank r (leaf 0) plays with rank r + 4 (leaf 1), the 4 pairs at once.
    # SimGrid routes a message up the spine of its destination modulo the spines (d-mod-k):
    # 1:1 (4 spines) gives each pair its own uplink, 2:1 two pairs per uplink, 4:1 all four.
    net = INTERCONNECTS["ib-qdr"]
    size, payload = SIZES[-1], SIZES[-1] + MESSAGE_OVERHEAD_BYTES
    per_pair = {}
    for topology, links, sharing in (
        ("crossbar", 2, 1),
        ("fat-tree-1to1", 4, 1),
        ("fat-tree-2to1", 4, 2),
        ("fat-tree-4to1", 4, 4),
    ):
        record = pingpong_record(smpi, tmp_path, 8, platform="ib-qdr", topology=topology)
        bandwidth, latency = link_figures(
            tmp_path / "platforms" / f"{platforms.platform_name(net, 8, 1, topology)}.xml"
        )
        assert record["pairs"] == 4 and record["bytes"][-1] == size
        # every pair alike: rank 0's pair is the slowest
        assert record["one_way_s"] == record["slowest_one_way_s"]
        per_pair[topology] = payload / (record["slowest_one_way_s"][-1] - links * latency)
        # The only time outside the network model is SMPI's 10 ns per MPI_Wtime, 0.1 ns per
        # one-way over 100 round trips: < 1e-7 of the 1-4 ms a 4 MiB message takes here.
        assert per_pair[topology] == pytest.approx(bandwidth / sharing, rel=1e-6), topology
    assert per_pair["fat-tree-1to1"] == pytest.approx(per_pair["crossbar"], rel=1e-6)
    assert per_pair["fat-tree-1to1"] / per_pair["fat-tree-2to1"] == pytest.approx(2, rel=1e-6)


def test_torus_messages_pay_the_latency_once_per_hop(smpi: Stack, tmp_path: Path) -> None:
    dims = platforms.torus_dimensions(16)
    assert dims == (4, 2, 2)  # node n sits at (n % 4, n // 4 % 2, n // 8), a ring per dimension
    for far, hops in ((1, 1), (2, 2), (3, 1), (6, 3), (13, 3)):  # from node 0
        coordinates = (far % 4, far // 4 % 2, far // 8)
        assert hops == sum(min(c, d - c) for c, d in zip(coordinates, dims))
        one_way, xml = pingpong_between(
            smpi, tmp_path, 16, (0, far), platform="ib-qdr", topology="torus"
        )
        bandwidth, latency = link_figures(xml)
        for size, simulated in zip(SIZES, one_way):
            analytic = hops * latency + (size + MESSAGE_OVERHEAD_BYTES) / bandwidth
            assert simulated == pytest.approx(analytic, rel=1e-9, abs=2e-10), (far, size)


def test_simulated_time_is_deterministic(smpi: Stack, tmp_path: Path) -> None:
    first = run_workload(smpi, tmp_path, "hycom", 4, 1, platform="gige", computation="off")
    second = run_workload(smpi, tmp_path, "hycom", 4, 1, platform="gige", computation="off")
    assert first["wall"] == second["wall"] > 0
    # the workload's wall (MPI_Wtime) is simulated: within SimGrid's whole simulated time
    assert first["wall"] <= first["simulated_time"]


def test_workload_verifies_with_the_same_bits_as_a_real_mpi(smpi: Stack, tmp_path: Path) -> None:
    real = next(
        (
            s
            for s in discover_stacks().stacks
            if not s.simulated and load_workloads()["pop"].is_built(s.id)
        ),
        None,
    )
    if real is None:
        pytest.skip("pop is not built for a real MPI stack: run `make build`")
    simulated = run_workload(smpi, tmp_path, "pop", 4, 2, platform="ib-qdr")
    program = [str(load_workloads()["pop"].executable_path(real.id)), "--size", "S", "--steps", "3"]
    result = subprocess.run(
        mpirun_command(real, 4, program),
        env=run_environment(real),
        capture_output=True,
        text=True,
        timeout=300,
    )
    measured = parse_result_line(result.stdout)
    assert measured is not None, result.stderr[-2000:]
    assert simulated["verification"]["passed"] and measured["verification"]["passed"]
    assert simulated["checksum"] == measured["checksum"]


def test_gige_is_slower_than_infiniband_qdr(smpi: Stack, tmp_path: Path) -> None:
    walls = {
        platform: run_workload(smpi, tmp_path, "hycom", 4, 1, platform=platform, computation="off")[
            "wall"
        ]
        for platform in ("gige", "ib-qdr")
    }
    assert walls["gige"] > 2 * walls["ib-qdr"]


def test_collective_algorithm_knobs_name_smpi_algorithms(smpi: Stack, tmp_path: Path) -> None:
    # SMPI aborts at start-up on an algorithm it does not have: run every mapped one
    lists = {op: list(names) for op, names in SMPI_ALGORITHMS.items()}
    program = [str(build_dir(smpi) / "bench" / "pingpong"), "1", "0"]
    for column in range(max(len(names) for names in lists.values())):
        knobs = {f"{op}_algorithm": names[column % len(names)] for op, names in lists.items()}
        result = simulate(smpi, tmp_path, program, 2, platform="gige", computation="off", **knobs)
        for op, names in lists.items():
            expected = f"--cfg=smpi/{op}:{SMPI_ALGORITHMS[op][names[column % len(names)]]}"
            assert expected in result.args
    with pytest.raises(Unsupported, match="SimGrid SMPI has no chain algorithm for MPI_Bcast"):
        knob_setting(smpi, {"bcast_algorithm": "chain"}, 2, 2, 1, tmp_path / "platforms")


def test_barrier_algorithm_changes_the_simulated_time_not_the_answer(
    smpi: Stack, tmp_path: Path
) -> None:
    # cesm's driver times its phases with barriers (the seed's largest MPI time): on 8 GigE
    # nodes the linear barrier and recursive doubling take different simulated times
    runs = {
        algorithm: run_workload(
            smpi,
            tmp_path,
            "cesm",
            8,
            1,
            platform="gige",
            computation="off",
            barrier_algorithm=algorithm,
        )
        for algorithm in ("linear", "recursive_doubling")
    }
    assert runs["linear"]["wall"] != runs["recursive_doubling"]["wall"]
    assert runs["linear"]["checksum"] == runs["recursive_doubling"]["checksum"]
    assert all(run["verification"]["passed"] for run in runs.values())


def test_user_errors_are_one_clear_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "hycom", "--platform", "gige,myrinet"]) == 1
    assert "unknown platform 'myrinet' (platforms: gige, 10gige, ib-qdr" in capsys.readouterr().err
    assert main(["simulate", "hycom", "--nodes", "1,zero"]) == 1
    assert "--nodes 'zero': node counts are positive integers" in capsys.readouterr().err
    assert main(["simulate", "hycom", "--ranks-per-node", "0"]) == 1
    assert "--ranks-per-node 0" in capsys.readouterr().err
    assert main(["simulate", "hycom", "--topology", "crossbar,dragonfly"]) == 1
    assert "unknown topology 'dragonfly' (topologies: crossbar, fat-tree-1to1" in (
        capsys.readouterr().err
    )
    assert main(["simulate", "hycom", "--knob", "rails=2"]) == 1
    assert "--knob 'rails=2': rails has its own flag, --rails" in capsys.readouterr().err
    assert main(["simulate", "hycom", "--knob", "allreduce_algorithm"]) == 1
    assert "write NAME=VALUE[,VALUE...]" in capsys.readouterr().err


def test_simulate_takes_any_other_knob_as_an_axis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    command = ["homme", "--platform", "ib-qdr", "--nodes", "2"]
    command += ["--knob", "allreduce_algorithm=default,recursive_doubling"]
    printed = simulate_plan(command, tmp_path, capsys, monkeypatch)
    assert "2 configurations" in printed and "--cfg=smpi/allreduce:rdb" in printed
    # homme keeps no mutable global (tests/test_global_state.py): no copy of them per rank
    assert printed.count("--cfg=smpi/privatization:no") == 2


def test_smpi_knobs_are_listed(smpi: Stack, capsys: pytest.CaptureFixture[str]) -> None:
    rows = {(name, value): how for name, value, how in knob_table(smpi)}
    assert rows["platform", "ib-qdr"].startswith(
        "InfiniBand QDR 4x: 3.368-3.657 GB/s, 1.3 us between"
    )
    assert rows["rails", "2"] == "rails = 2 (-platform <generated>.xml)"
    assert rows["computation", "off"] == "ESM_KERNEL_COST=off --cfg=smpi/simulate-computation:no"
    assert rows["network_model", "smpi"] == "--cfg=network/model:SMPI"
    assert rows["topology", "fat-tree-2to1"].startswith(
        "2-level fat-tree: leaves of 4 nodes, each with 2 uplink(s), one per spine switch: 2:1"
    )
    assert rows["transport", "tcp"].startswith("unsupported: the smpi stack simulates")
    assert main(["knobs", "--stack", "smpi"]) == 0
    out = capsys.readouterr().out
    assert "platform" in out and "ib-hdr" in out and "smpi: SimGrid SMPI " in out
    assert "fat-tree-2to1" in out and "torus" in out


def test_simulate_writes_one_platform_file_per_topology(smpi: Stack, tmp_path: Path) -> None:
    assert (
        main(
            [
                "simulate",
                "hycom",
                "--platform",
                "ib-qdr",
                "--topology",
                "crossbar,torus",
                "--nodes",
                "8",
                "--dry-run",
                "--out",
                str(tmp_path / "t.duckdb"),
            ]
        )
        == 0
    )
    written = sorted(path.name for path in (tmp_path / "t" / "platforms").glob("*.xml"))
    assert written == ["ib-qdr-8n1c.xml", "ib-qdr-torus-8n1c.xml"]
    assert 'topo_parameters="2,2,2"' in (tmp_path / "t" / "platforms" / written[1]).read_text()


def test_study_runner_stores_a_simulated_run(smpi: Stack, tmp_path: Path) -> None:
    block = {
        "workload": "hycom",
        "size": "S",
        "steps": 2,
        "stack": "smpi",
        "ranks": [1, 2],
        "ranks_per_node": 1,
        "knobs": {"platform": ["ib-qdr"], "computation": ["off"]},
        "repeats": {"warmup": 0, "min": 2, "max": 2},
    }
    study = study_from_dict({"name": "sim", "matrix": [block]}, "test")
    outcome = run_study(
        study, tmp_path / "sim.duckdb", discover_stacks().stacks, load_workloads(), QUIET
    )
    assert outcome.complete == 2
    with Store(tmp_path / "sim.duckdb", read_only=True) as store:
        run = next(r for r in store.runs() if r["ranks"] == 2)
        reps = store.rows(
            "SELECT * FROM repetition WHERE kind = 'measure' AND run_key = ?", [run["run_key"]]
        )
        groups = build_groups(load_results(store), None)
    assert (run["stack"], run["nodes"], run["oversubscribed"]) == ("smpi", 2, False)
    # the report plots a simulated cluster against its nodes, as the seeds do
    performance = group_figures(groups[0], cores=2)[0]
    assert performance.title == "hycom S: performance vs nodes"
    assert b"nodes (1 rank per node)" in performance.svg
    assert json.loads(run["knobs"]) == {"platform": "ib-qdr", "computation": "off"}
    assert "-platform" in json.loads(run["launcher_args"])
    assert reps[0]["wall"] == reps[1]["wall"] and reps[0]["verification"] == "passed"
    assert "Simulated time" in reps[0]["stderr"]
    # what simulating it cost here: the simulator's real time and peak resident memory
    result = next(
        r for r in load_results(Store(tmp_path / "sim.duckdb", read_only=True)) if r.ranks == 2
    )
    seconds, rss = result.simulator_cost
    assert seconds == statistics.median(rep["elapsed"] for rep in reps)
    assert rss is not None and rss > 1e6 and not result.folded


def test_fold_on_is_refused_for_a_program_that_does_not_fold(smpi: Stack, tmp_path: Path) -> None:
    block = {
        "name": "pingpong",
        "command": [str(build_dir(smpi) / "bench" / "pingpong"), "1"],
        "stack": "smpi",
        "ranks": [2],
        "knobs": {"fold": ["on", "auto"]},
        "repeats": {"warmup": 0, "min": 1, "max": 1},
    }
    study = study_from_dict({"name": "fold", "matrix": [block]}, "test")
    outcome = run_study(
        study, tmp_path / "fold.duckdb", discover_stacks().stacks, load_workloads(), QUIET
    )
    assert (outcome.skipped, outcome.complete) == (1, 1)
    with Store(tmp_path / "fold.duckdb", read_only=True) as store:
        reasons = [r["reason"] for r in store.runs() if r["status"] == "skipped"]
    assert reasons == [
        "pingpong does not fold (folding needs `folds = true` in a workload "
        "manifest, docs/simulate.md): use fold = off or auto"
    ]


def test_every_simulation_knob_is_a_flag_of_esmperf_simulate() -> None:
    """`esmperf simulate` takes each knob of the simulated stack as --knob-name (platform has
    its own default): a knob added to mpi/knobs.py without a flag fails here."""
    flags = [knob for knob, _, _ in KNOB_FLAGS]
    assert len(flags) == len(set(flags))
    assert sorted(flags) == sorted(set(SIMULATION_KNOBS) - {"platform"})
    assert all(knob in KNOBS for knob in flags)
