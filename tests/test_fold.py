"""Folding and the node model (native/core/esm_fold.h, docs/simulate.md "Folding"), through the
core's self-test esm_fold_test: under SimGrid SMPI a folded run shares fields and replicated
data between ranks, runs each kernel on its first calls only and charges the rest; its
communication and, with the deterministic cost model, its simulated time are a full run's
exactly. The node model charges a kernel its bytes over the node's bandwidth share. Real MPI
builds refuse to fold with one clear message."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.launch.smpirun import simulated_time
from esmperf.mpi import machines
from esmperf.mpi.build import build_dir
from esmperf.mpi.knob_setting import knob_setting, write_files
from esmperf.mpi.knobs import FOLD_AUTO_RANKS, Unsupported
from esmperf.mpi.smpi_knobs import (
    NO_DETACHED_SENDS,
    PRECISION,
    SMPI_AT_SCALE,
    SMPI_MMAP,
    SMPI_MMAP_RANKS,
)
from esmperf.mpi.stacks import Stack, discover_stacks
from esmperf.report.findings import connection_findings
from esmperf.store.results import RunResult
from esmperf.study.classify import last_message, simulator_critical
from esmperf.workloads import read_manifest

STEPS = 10
SAMPLES = 3


@pytest.fixture(scope="module")
def smpi() -> Stack:
    stack = discover_stacks().by_id("smpi")
    if stack is None:
        pytest.skip("SimGrid SMPI is not installed (smpicc, smpirun): make setup installs it")
    if not (build_dir(stack) / "core" / "esm_fold_test").is_file():
        pytest.skip("the smpi stack is not built: run `esmperf build --stack smpi`")
    return stack


def fold_test(
    stack: Stack, tmp_path: Path, ranks: int, ranks_per_node: int, env: dict[str, str], **knobs: str
) -> subprocess.CompletedProcess[str]:
    setting = knob_setting(stack, knobs, ranks, 2, ranks_per_node, tmp_path / "platforms")
    write_files(setting)
    program = [str(build_dir(stack) / "core" / "esm_fold_test"), "--steps", str(STEPS)]
    command = mpirun_command(stack, ranks, program, setting.launcher_args)
    full_env = run_environment(stack, os.environ) | setting.env | {"TMPDIR": str(tmp_path)} | env
    return subprocess.run(
        command, env=full_env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )


def result_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads(
        [line for line in done.stdout.splitlines() if line.startswith('{"workload"')][-1]
    )
    assert record["verification"]["passed"]
    record["simulated_time"] = simulated_time(done.stderr)
    return record


def points(rank: int) -> int:
    return 1000 + 100 * rank  # fold_test.c: rank r's field


def field_bytes(ranks: int) -> int:
    """What fold_test's ranks ask of esm_field_alloc: two fields of their points, one of 4096."""
    return sum(2 * 8 * points(r) + 8 * 4096 for r in range(ranks))


def field_bytes_held_folded(ranks: int) -> int:
    """Folded, each field is held once per power-of-two size among the ranks."""

    def capacity(size: int) -> int:
        return 1 << max(6, (size - 1).bit_length())

    per_field = {capacity(8 * points(r)) for r in range(ranks)}
    return 2 * sum(per_field) + capacity(8 * 4096)


def test_folded_run_shares_fields_and_charges_kernels_after_their_samples(smpi, tmp_path):
    record = result_of(fold_test(smpi, tmp_path, 4, 2, {"ESM_FOLD": "1"}, computation="off"))
    fold = record["fold"]
    assert fold["folded"] is True
    assert (fold["kernel_calls_run"], fold["kernel_calls_charged"]) == (
        SAMPLES,
        4 * STEPS - SAMPLES,
    )
    assert record["fields_shared"] is True and record["table_owned"] is False
    assert (fold["field_bytes"], fold["field_bytes_held"]) == (
        field_bytes(4),
        field_bytes_held_folded(4),
    )
    assert record["work"] == STEPS * sum(points(r) for r in range(4))


def test_folded_run_with_the_cost_measured_warms_each_rank_before_sampling(smpi, tmp_path):
    """Each rank's first call of a kernel runs unsampled (it touches that rank's arrays first, as
    a full run does once in many calls); the samples are later calls."""
    record = result_of(fold_test(smpi, tmp_path, 4, 2, {"ESM_FOLD": "1"}, computation="measured"))
    fold = record["fold"]
    assert fold["kernel_cost"] == "measured"
    assert (fold["kernel_calls_run"], fold["kernel_calls_charged"]) == (
        4 + SAMPLES,
        4 * STEPS - 4 - SAMPLES,
    )
    assert record["work"] == STEPS * sum(points(r) for r in range(4))


def test_unfolded_simulation_keeps_private_fields_and_runs_every_kernel(smpi, tmp_path):
    record = result_of(
        fold_test(
            smpi,
            tmp_path,
            4,
            2,
            {"ESM_KERNEL_COST": "model", "ESM_NODE_BANDWIDTH": "1e9"},
            computation="off",
        )
    )
    assert "fields_shared" not in record and record["table_owned"] is True
    assert record["fold"]["folded"] is False
    assert (record["fold"]["kernel_calls_run"], record["fold"]["kernel_calls_charged"]) == (40, 0)
    assert record["fold"]["field_bytes"] == record["fold"]["field_bytes_held"] == field_bytes(4)


def test_a_recorded_history_is_the_nearest_rank_counts_and_repeats_its_last_step(smpi, tmp_path):
    """fold_test.c's histories: deck T at 4 and 16 ranks, and with options "--o x" at 32. The
    nearest by ratio (8 ranks: a tie, the lower) among those of the run's options (4 ranks with
    "--o x": the 32), none for another deck or for options a deck has none of; a step past the
    3 recorded repeats the last."""
    record = result_of(fold_test(smpi, tmp_path, 2, 2, {}, computation="off"))
    assert record["history"] == {
        "nearest": "1:4 5:4 8:4 9:16 100:16",
        "with_options_ranks": 32,
        "none_for_other_decks": True,
        "steps": "1/2 2/7/7/7",
    }


def test_folded_and_full_runs_send_the_same_and_take_the_same_simulated_time(smpi, tmp_path):
    model = {
        "ESM_KERNEL_COST": "model",
        "ESM_NODE_BANDWIDTH": "1e9",
        "ESM_NODE_RANKS": "2",
        "ESM_RESULT_PER_RANK": "1",
    }
    full = result_of(fold_test(smpi, tmp_path, 6, 2, model, computation="off"))
    folded = result_of(
        fold_test(smpi, tmp_path, 6, 2, model | {"ESM_FOLD": "1"}, computation="off")
    )
    assert folded["fold"]["kernel_calls_charged"] == 6 * STEPS - SAMPLES
    assert folded["comm"] == full["comm"] and folded["comm_per_rank"] == full["comm_per_rank"]
    assert folded["wall"] == full["wall"]
    assert folded["simulated_time"] == full["simulated_time"]
    assert folded["fold"]["kernel_seconds_max"] == full["fold"]["kernel_seconds_max"]


def test_node_model_charges_bytes_over_the_bandwidth_share_of_the_node(smpi, tmp_path):
    """24 bytes a point (fold_test's triad); the busiest rank, 5, has 1500 points; its node's
    bandwidth is shared by the ranks on that node."""

    def kernel_seconds(ranks_per_node: int) -> float:
        env = {
            "ESM_KERNEL_COST": "model",
            "ESM_NODE_BANDWIDTH": "2e9",
            "ESM_NODE_RANKS": str(ranks_per_node),
        }
        done = fold_test(smpi, tmp_path, 6, ranks_per_node, env, computation="off")
        return result_of(done)["fold"]["kernel_seconds_max"]

    for ranks_per_node in (1, 2, 3):
        expected = STEPS * 24 * points(5) * ranks_per_node / 2e9
        assert kernel_seconds(ranks_per_node) == pytest.approx(expected, rel=1e-12)


def test_folding_needs_the_simulator(tmp_path):
    stack = discover_stacks().by_id("openmpi")
    if stack is None or not (build_dir(stack) / "core" / "esm_fold_test").is_file():
        pytest.skip("the openmpi stack is not built")
    program = [str(build_dir(stack) / "core" / "esm_fold_test")]
    env = run_environment(stack, os.environ) | {"ESM_FOLD": "1"}
    done = subprocess.run(
        mpirun_command(stack, 2, program), env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert "esm_fold_test: error: folding (ESM_FOLD=1) needs the simulator" in done.stderr
    assert '{"workload"' not in done.stdout


def test_bad_fold_setting_is_one_clear_error(smpi, tmp_path):
    done = fold_test(smpi, tmp_path, 2, 1, {"ESM_KERNEL_COST": "bogus"}, computation="off")
    assert done.returncode == 1
    assert (
        "esm_fold_test: error: ESM_KERNEL_COST=bogus: expected measured, model or off"
        in done.stderr
    )


# -- the knobs that drive it (no SimGrid needed) ------------------------------------------------


def test_machine_knob_gives_the_core_its_node(smpi, tmp_path):
    setting = knob_setting(smpi, {"machine": "juropa"}, 16, 2, 8, tmp_path)
    node = machines.machine("juropa")
    assert setting.env == {
        "ESM_NODE_RANKS": "8",
        "ESM_NODE_BANDWIDTH": f"{node.bandwidth:.6g}",
        "ESM_CORE_SPEED": f"{node.core_speed:.6g}",
        "ESM_CORE_FLOPS": "1.172e+10",  # 4 flops a cycle at 2.93 GHz
    }
    assert node.bandwidth == pytest.approx(2 * 3 * 8.533e9 * machines.STREAM_EFFICIENCY)
    model = knob_setting(
        smpi, {"machine": "dell-r815", "computation": "model"}, 96, 2, 48, tmp_path
    )
    assert model.env["ESM_KERNEL_COST"] == "model"
    assert "--cfg=smpi/simulate-computation:no" in model.launcher_args


def test_fold_auto_folds_from_its_threshold_and_on_always(smpi, tmp_path):
    below = knob_setting(smpi, {}, FOLD_AUTO_RANKS - 1, 2, 1, tmp_path)
    at = knob_setting(smpi, {}, FOLD_AUTO_RANKS, 2, 8, tmp_path)
    assert "ESM_FOLD" not in below.env and at.env["ESM_FOLD"] == "1"
    assert knob_setting(smpi, {"fold": "on"}, 2, 2, 1, tmp_path).env["ESM_FOLD"] == "1"
    assert "ESM_FOLD" not in knob_setting(smpi, {"fold": "off"}, 4096, 2, 8, tmp_path).env


def test_bad_machine_settings_are_one_clear_reason(smpi, tmp_path):
    with pytest.raises(Unsupported, match="juropa has 8 cores per node: at most 8 ranks"):
        knob_setting(smpi, {"machine": "juropa"}, 48, 2, 12, tmp_path)
    with pytest.raises(Unsupported, match="computation = model .* choose a machine"):
        knob_setting(smpi, {"computation": "model"}, 4, 2, 1, tmp_path)
    with pytest.raises(ValueError, match="knob machine has no value 'cray'"):
        knob_setting(smpi, {"machine": "cray"}, 4, 2, 1, tmp_path)
    with pytest.raises(machines.MachineError, match="unknown machine 'cray' .machines: dell-m610"):
        machines.machine("cray")


def test_preconnection_stops_fitting_a_juropa_node_where_its_memory_ends():
    """Seed 002: about 0.55 MB per connection; 8 ranks share a node's 24 GB."""
    juropa = machines.machine("juropa")
    limit = juropa.preconnect_limit(8)
    assert limit == int(24e9 / 8 // 0.55e6) + 1 == 5455
    assert machines.connection_memory(limit, 6, preconnected=True) * 8 <= juropa.memory
    assert machines.connection_memory(limit + 1, 6, preconnected=True) * 8 > juropa.memory
    assert machines.connection_memory(13824, 6, preconnected=False) == 6 * 0.55e6


def test_connection_time_pre_connected_against_on_demand():
    """1 ms per connection (a guess): pre-connecting pays every other rank in MPI_Init, on
    demand only the peers (HOMME ne120 on 13,824 ranks: 6 DSS peers)."""
    assert machines.CONNECTION_SECONDS == 1e-3
    assert machines.connection_time(13824, 6, preconnected=True) == pytest.approx(13.823)
    assert machines.connection_time(13824, 6, preconnected=False) == pytest.approx(0.006)
    assert machines.connection_time(4, 6, preconnected=False) == pytest.approx(0.003)


def test_the_program_s_own_error_is_the_reason_not_the_simulator_s_last_line():
    stderr = (
        "hycom: error: 96 ranks but only 64 ocean tiles: use at most 64 ranks\n"
        "[node-0:0:(1) 0.000000] smpi_global.cpp:645: [smpi_kernel/WARNING] SMPI process "
        "did not return 0. Return value : 1\n[0.000050] [smpi_utils/INFO] Simulated time: "
        "5e-05 seconds.\n\nThe simulation took 0.01 seconds (after parsing and platform "
        "setup)\n0.0026 seconds were actual computation of the application\n[0.000050] "
        "[smpi_utils/INFO] More than 75% of the time was spent inside the application code."
        "\nYou may want to use sampling functions or trace replay to reduce this.\n"
    )
    assert last_message(stderr) == (
        "hycom: error: 96 ranks but only 64 ocean tiles: use at most 64 ranks"
    )


def test_findings_say_where_preconnection_stops_fitting_the_node():
    def simulated(ranks: int) -> RunResult:
        run = {
            "stack": "smpi",
            "knobs": json.dumps({"machine": "juropa"}),
            "ranks": ranks,
            "ranks_per_node": 8,
        }
        return RunResult(run, [], [], "steps/s", True, None)

    found = connection_findings([simulated(1024), simulated(13824)])
    assert [f.text for f in found] == [
        "On juropa nodes (8 ranks each, 22.4 GiB), pre-connecting every rank at 0.55 MB per "
        "connection (seed 002's ParaStation figure) stops fitting the node's memory above 5455 "
        "ranks; this study's largest run (13824 ranks) needs on-demand connections "
        "(PSP_ONDEMAND=1): pre-connected it would hold 56.6 GiB of connections on each node. "
        "In time, at 1 ms per connection (a guess, docs/simulate.md), pre-connecting 13824 "
        "ranks costs each 13.8 s in MPI_Init; on demand a rank pays 1 ms per peer at its "
        "first message."
    ]
    assert "fits pre-connected" in connection_findings([simulated(1024)])[0].text


def test_a_manifest_says_whether_its_workload_folds(tmp_path):
    manifest = tmp_path / "workload.toml"
    manifest.write_text(
        'name = "w"\nexecutable = "w"\nsizes = ["S"]\nfom_unit = "steps/s"\n'
        "higher_is_better = true\nfolds = true\n"
    )
    assert read_manifest(manifest).folds is True
    manifest.write_text(manifest.read_text().replace("folds = true\n", ""))
    assert read_manifest(manifest).folds is False


def test_simgrid_is_tuned_for_scale_from_the_folding_threshold(smpi, tmp_path):
    simgrid = {"eager_limit": "simgrid"}  # SMPI's own protocol: rendezvous at scale
    small = knob_setting(smpi, simgrid, FOLD_AUTO_RANKS - 1, 2, 8, tmp_path / "platforms")
    large = knob_setting(smpi, simgrid, FOLD_AUTO_RANKS, 2, 8, tmp_path / "platforms")
    assert not set(SMPI_AT_SCALE) & set(small.launcher_args)
    assert large.launcher_args[-len(SMPI_AT_SCALE) :] == SMPI_AT_SCALE
    # the default (eager_limit = auto: the MPI's eager sends on ib-qdr) keeps detached sends
    default = knob_setting(smpi, {}, FOLD_AUTO_RANKS, 2, 8, tmp_path / "platforms")
    assert NO_DETACHED_SENDS not in default.launcher_args
    assert f"{PRECISION}1e-8" in default.launcher_args
    # each rank's globals by dlopen (smpirun's default) until SMPI_MMAP_RANKS, then by mmap
    assert not any("privatization" in arg for arg in large.launcher_args)
    before = knob_setting(smpi, {}, SMPI_MMAP_RANKS - 1, 2, 8, tmp_path / "platforms")
    mapped = knob_setting(smpi, {}, SMPI_MMAP_RANKS, 2, 8, tmp_path / "platforms")
    assert SMPI_MMAP not in before.launcher_args and mapped.launcher_args[-1] == SMPI_MMAP
    # Bruck's allgather and a ring allgatherv at scale (the allreduce stays SMPI's), unless
    # the knob of the collective chooses another
    assert {"--cfg=smpi/allgather:bruck", "--cfg=smpi/allgatherv:mpich_ring"} <= set(
        large.launcher_args
    )
    assert not any("smpi/allgather" in a or "smpi/allreduce" in a for a in small.launcher_args)
    assert not any("smpi/allreduce" in a for a in large.launcher_args)
    ring = knob_setting(
        smpi, {"allgather_algorithm": "ring"}, FOLD_AUTO_RANKS, 2, 8, tmp_path / "platforms"
    )
    assert [a for a in ring.launcher_args if "smpi/allgather:" in a] == [
        "--cfg=smpi/allgather:ring"
    ]
    # SimGrid accepts them, and the run communicates as it did without them
    tuned = result_of(
        fold_test(
            smpi, tmp_path, FOLD_AUTO_RANKS, 8, {"ESM_FOLD": "0"}, computation="off", fold="off"
        )
    )
    assert tuned["work"] == STEPS * sum(points(r) for r in range(FOLD_AUTO_RANKS))


def test_simgrids_fatal_message_is_the_reason_not_its_abort():
    """SimGrid stops a run with a CRITICAL line (xbt_die; "Deadlock detected"), then the
    process aborts: the reason is SimGrid's text, not "Aborted"; a program's own error line
    still comes first."""
    stderr = (
        "[node-3-7:183:(184) 12.345678] ../src/src/kernel/resource/models/ns3/"
        "ns3_simulator.cpp:98: [res_ns3/CRITICAL] ns-3: a connection kept open was closed\n"
        "Backtrace (displayed in actor 183):\n(the backtrace is empty)\nAborted\n"
    )
    assert last_message(stderr) == "SimGrid: ns-3: a connection kept open was closed"
    assert last_message("hycom: error: too many ranks\n" + stderr) == (
        "hycom: error: too many ranks"
    )
    deadlock = "[0.085094] ./src/kernel/EngineImpl.cpp:718: [ker_engine/CRITICAL] Oops! Deadlock"
    tail = " detected\n[0.085] [smpi_utils/INFO] Simulated time: 0.08"
    assert last_message(deadlock + tail) == "SimGrid: Oops! Deadlock detected"
    assert simulator_critical(deadlock) == "SimGrid: Oops! Deadlock"
