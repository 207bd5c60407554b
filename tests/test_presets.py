"""Today's clusters as presets (issue 22, item 5; docs/simulate.md, "Today's clusters"): the
new interconnects and node are knob values with their figures derived exactly from the cited
sources, their platform files are well formed, and a simulated ping-pong on each gives exactly
latency + (n + 16) / bandwidth. The SimGrid runs are skipped without a built smpi stack."""

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from esmperf.mpi import machines, platforms
from esmperf.mpi.knob_setting import knob_table
from esmperf.mpi.knobs import KNOBS
from esmperf.mpi.platforms import INTERCONNECTS, MESSAGE_OVERHEAD_BYTES
from esmperf.mpi.stacks import Stack
from test_smpi import SIZES, pingpong, smpi  # noqa: F401 (smpi is a fixture)

TODAYS_PLATFORMS = ("ib-ndr", "roce-100", "roce-200", "slingshot-11", "efa")
TODAYS_MACHINES = ("azure-hbv4",)
DOCS = Path(__file__).resolve().parents[1] / "docs" / "simulate.md"


def test_todays_presets_are_knob_values_and_documented() -> None:
    assert set(KNOBS["platform"].values) >= set(TODAYS_PLATFORMS)
    assert set(KNOBS["machine"].values) >= set(TODAYS_MACHINES)
    docs = DOCS.read_text()
    for name in (*TODAYS_PLATFORMS, *TODAYS_MACHINES):
        assert f"| `{name}` |" in docs, name  # a row in the docs' tables, with its sources


def test_todays_interconnects_are_derived_from_their_sources() -> None:
    # NDR: 400 Gb/s data rate less 26 header bytes per 4096-byte InfiniBand packet
    assert INTERCONNECTS["ib-ndr"].bandwidth == 400e9 / 8 * 4096 / 4122
    assert INTERCONNECTS["ib-ndr"].latency == 2.0e-6
    # RoCEv2: the Ethernet rate less 82 framing bytes per 4096-byte packet
    assert INTERCONNECTS["roce-100"].bandwidth == 100e9 / 8 * 4096 / 4178
    assert INTERCONNECTS["roce-200"].bandwidth == 200e9 / 8 * 4096 / 4178
    assert INTERCONNECTS["roce-100"].latency == INTERCONNECTS["roce-200"].latency == 2.0e-6
    # Slingshot-11 and EFA: 2 MiB over the step between published 2 MiB and 4 MiB ping-pongs
    assert INTERCONNECTS["slingshot-11"].bandwidth == pytest.approx(
        2097152 / ((180.44 - 94.06) * 1e-6), rel=1e-12
    )
    assert round(INTERCONNECTS["slingshot-11"].bandwidth / 1e6) == 24278
    assert INTERCONNECTS["slingshot-11"].latency == 2.76e-6
    assert INTERCONNECTS["efa"].bandwidth == pytest.approx(
        2097152 / ((725.62 - 379.37) * 1e-6), rel=1e-12
    )
    assert round(INTERCONNECTS["efa"].bandwidth / 1e6) == 6057
    assert INTERCONNECTS["efa"].latency == 9.87e-6
    for name in TODAYS_PLATFORMS:
        net = INTERCONNECTS[name]
        assert net.bandwidth_source and net.latency_source and net.source, name


def test_seed_interconnects_are_links_as_built() -> None:
    # the seed studies' results depend on these: they move only with a sourced fix (issue 22,
    # links as built: framing and the adapters' host bus, tests/test_links.py)
    figures = {name: (net.bandwidth, net.latency) for name, net in INTERCONNECTS.items()}
    assert figures["gige"] == (1e9 / 8 * 1448 / 1538, 50e-6)
    assert figures["10gige"] == (10e9 / 8 * 1448 / 1538, 10e-6)
    assert figures["ib-qdr"] == (4e9 * 128 / 152, 1.3e-6)
    assert figures["ib-fdr"] == (pytest.approx(8e9 * 128 / 130 * 128 / 152, rel=1e-15), 0.7e-6)
    assert figures["ib-hdr"] == (200e9 / 8 * 4096 / 4122, 1.2e-6)


@pytest.mark.parametrize("name", TODAYS_PLATFORMS)
def test_todays_platform_files_are_well_formed(name: str) -> None:
    net = INTERCONNECTS[name]
    root = ElementTree.fromstring(platforms.platform_xml(net, nodes=4, cores=8))
    cluster = root.find("zone/cluster")
    assert cluster is not None
    assert cluster.get("id") == name and cluster.get("radical") == "0-3"
    assert cluster.get("core") == "8" and cluster.get("sharing_policy") == "SPLITDUPLEX"
    # crossbar: two links, half the latency each
    assert float(cluster.get("bw", "").removesuffix("Bps")) == pytest.approx(net.bandwidth, 1e-14)
    assert float(cluster.get("lat", "")[:-1]) == pytest.approx(net.latency / 2, 1e-14)
    assert platforms.platform_name(net, 4, 8) == f"{name}-4n8c"


def test_azure_hbv4_node_figures_are_exact() -> None:
    node = machines.machine("azure-hbv4")
    assert (node.cores, node.memory, node.clock_ghz) == (176, 688e9, 2.4)
    assert node.bandwidth == 750e9  # the published STREAM triad, not peak x 0.6
    assert node.memory_peak == 2 * 12 * 38.4e9
    assert node.core_speed == 2.4 / 2.5 / 1.16
    assert node.environment(4) == {
        "ESM_NODE_RANKS": "4",
        "ESM_NODE_BANDWIDTH": "7.5e+11",
        "ESM_CORE_SPEED": "0.827586",
        "ESM_CORE_FLOPS": "3.84e+10",  # Zen 4: 16 flops a cycle at 2.4 GHz
    }
    assert node.preconnect_limit(176) == 7108  # 688 GB / 176 ranks / 0.55 MB, + 1
    assert node.interconnects == ("ib-ndr",) and node.stream_source


def test_seed_nodes_keep_the_stream_efficiency_guess() -> None:
    for name in ("dell-m610", "dell-r815", "juropa"):
        node = machines.machine(name)
        assert node.stream_triad is None
        assert node.bandwidth == node.memory_peak * machines.STREAM_EFFICIENCY


def test_todays_presets_are_listed_by_knobs(smpi: Stack) -> None:  # noqa: F811
    rows = {(name, value): how for name, value, how in knob_table(smpi)}
    assert rows["platform", "ib-ndr"].startswith("InfiniBand NDR 4x: 49.68 GB/s, 2 us between")
    assert rows["platform", "roce-200"].startswith(
        "RoCEv2 over 200 Gigabit Ethernet: 24.51 GB/s, 2 us between"
    )
    assert rows["platform", "slingshot-11"].startswith(
        "HPE Slingshot-11 (Cassini NIC): 24.28 GB/s, 2.76 us between"
    )
    assert rows["platform", "efa"].startswith(
        "AWS Elastic Fabric Adapter (hpc6a, 100 Gb/s): 6.057 GB/s, 9.87 us between"
    )
    assert rows["machine", "azure-hbv4"] == (
        "ESM_NODE_RANKS=1 ESM_NODE_BANDWIDTH=7.5e+11 ESM_CORE_SPEED=0.827586 "
        "ESM_CORE_FLOPS=3.84e+10"
    )


@pytest.mark.parametrize("platform", TODAYS_PLATFORMS)
def test_pingpong_on_todays_interconnects_is_latency_plus_size_over_bandwidth(
    smpi: Stack,  # noqa: F811
    tmp_path: Path,
    platform: str,
) -> None:
    net = INTERCONNECTS[platform]
    one_way = pingpong(smpi, tmp_path, platform)
    for size, simulated in zip(SIZES, one_way):
        analytic = net.latency + (size + MESSAGE_OVERHEAD_BYTES) / net.bandwidth
        # exact up to the 10 ns SMPI charges per MPI_Wtime (2 calls over 200 messages)
        assert simulated == pytest.approx(analytic, rel=1e-9, abs=2e-10), (size, simulated)
