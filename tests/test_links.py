"""Links as built (issue 22, items 2 and 4; mpi/links.py, docs/simulate.md "Links as built"):
framing and the adapters' host bus in the interconnects' figures, full-duplex links, a node's
memory as the channel its on-node messages share, and dual rail. Every simulated time exact
(CM02, computation off); the SimGrid runs are skipped without a built smpi stack."""

import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from pathlib import Path

import pytest

from esmperf.cli import main
from esmperf.mpi import links, machines, ns3_network, platforms
from esmperf.mpi.knob_setting import knob_setting
from esmperf.mpi.knobs import KNOBS, Unsupported
from esmperf.mpi.links import LinkChoice
from esmperf.mpi.platforms import INTERCONNECTS, MESSAGE_OVERHEAD_BYTES, PlatformError
from esmperf.mpi.stacks import Stack
from test_smpi import (  # noqa: F401 (smpi is a fixture)
    SIZES,
    pingpong_output,
    pingpong_program,
    run_setting,
    simulate,
    smpi,
)

REAL = Stack(
    id="openmpi",
    family="openmpi",
    mpicc=Path("/bin/mpicc"),
    mpifort=None,
    mpirun=Path("/bin/mpirun"),
    bin_dir=Path("/bin"),
    version="Open MPI v4.1.4",
)
LARGEST = SIZES[-1] + MESSAGE_OVERHEAD_BYTES  # bytes on the wire of the 4 MiB message


# -- the figures (no SimGrid needed) ------------------------------------------------------------


def test_ethernet_carries_tcp_payload_after_framing() -> None:
    gige, tengige = INTERCONNECTS["gige"], INTERCONNECTS["10gige"]
    assert links.TCP_MSS_BYTES == 1500 - 20 - 20 - 12  # IPv4, TCP, the timestamps option
    assert links.ETHERNET_MTU_BYTES + links.ETHERNET_WIRE_OVERHEAD_BYTES == 1538
    assert gige.bandwidth == 125e6 * 1448 / 1538 and round(gige.bandwidth / 1e5) == 1177
    assert tengige.bandwidth == 1250e6 * 1448 / 1538
    # ns-3 frames its packets itself: its links run at the line rate, not the payload rate
    assert gige.wire_rate == 125e6 and tengige.wire_rate == 1250e6
    assert 'bandwidth="125000000Bps"' in ns3_network.ns3_platform_xml(gige, 2, 1)


def test_infiniband_is_the_smaller_of_its_link_and_its_host_bus() -> None:
    qdr, fdr, hdr = INTERCONNECTS["ib-qdr"], INTERCONNECTS["ib-fdr"], INTERCONNECTS["ib-hdr"]
    # QDR: 32 Gb/s less 26 header bytes per 2048-byte packet, above ConnectX-2's PCIe 2.0 x8
    qdr_link = links.ib_payload_rate(platforms.IB_QDR_DATA_RATE, links.IB_QDR_MTU_BYTES)
    assert platforms.IB_QDR_DATA_RATE == 4e9 and qdr_link == 4e9 * 2048 / 2074
    assert links.PCIE_GEN2_X8.data_rate == 4e9
    assert qdr.bandwidth_at("low") == qdr.bandwidth == 4e9 * 128 / 152 < qdr_link
    assert qdr.bandwidth_at("high") == 4e9 * 256 / 280 < qdr_link
    assert (round(qdr.bandwidth / 1e6), round(qdr.bandwidth_at("high") / 1e6)) == (3368, 3657)
    # FDR: the bus limits at 128-byte payloads, the link at 256
    fdr_link = links.ib_payload_rate(platforms.IB_FDR_DATA_RATE, 4096)
    assert fdr.bandwidth == pytest.approx(8e9 * 128 / 130 * 128 / 152, rel=1e-15)
    assert fdr.bandwidth_at("high") == fdr_link < links.PCIE_GEN3_X8.payload_rate("high")
    # HDR: 200 Gb/s is already the data rate (64b/66b and FEC inside): only the headers
    assert hdr.bandwidth == hdr.bandwidth_at("high") == 25e9 * 4096 / 4122
    assert hdr.bandwidth < links.PCIE_GEN4_X16.payload_rate("low")
    assert hdr.latency == 1.2e-6 and "HBv3" in hdr.latency_source
    # no range: both ends are the figure
    assert INTERCONNECTS["gige"].bandwidth_at("high") == INTERCONNECTS["gige"].bandwidth


def test_link_knobs_are_opt_in_and_write_the_platform() -> None:
    net = INTERCONNECTS["ib-qdr"]
    assert {KNOBS[k].baseline for k in ("bandwidth_end", "rails", "node_channel")} == {
        "low",
        "1",
        "per_pair",
    }
    # the defaults: the same bytes and names as without the knobs
    assert platforms.platform_xml(net, 4, 2, links=LinkChoice()) == platforms.platform_xml(
        net, 4, 2
    )
    assert platforms.platform_name(net, 4, 2, links=LinkChoice()) == "ib-qdr-4n2c"
    dual = platforms.platform_xml(net, 4, 2, links=LinkChoice("high", 2))
    assert f'bw="{2 * 4e9 * 256 / 280:.15g}Bps"' in dual and "high end of the bandwidth" in dual
    assert platforms.platform_name(net, 4, 2, links=LinkChoice("high", 2)) == (
        "ib-qdr-4n2c-bw-high-2rails"
    )


def test_a_shared_node_channel_is_one_shared_link_per_node() -> None:
    net, memory = INTERCONNECTS["ib-qdr"], machines.machine("dell-m610").bandwidth
    channel = links.node_channel_rate(memory)
    assert channel == memory / 2
    xml = platforms.platform_xml(net, 3, 12, links=LinkChoice(node_channel=channel))
    zone = ElementTree.fromstring(xml).find("zone/zone")
    assert zone is not None and zone.get("routing") == "Cluster"
    assert [h.get("id") for h in zone.findall("host")] == ["node-0", "node-1", "node-2"]
    policies = {link.get("id"): link.get("sharing_policy") for link in zone.findall("link")}
    assert policies["ib-qdr_link_1"] == "SPLITDUPLEX"  # the crossbar's link, as <cluster> has
    assert policies["ib-qdr_copy_1"] == "FATPIPE" and policies["ib-qdr_memory_1"] is None
    route = zone.findall("route")[1]
    assert route.get("src") == route.get("dst") == "node-1"
    assert [c.get("id") for c in route] == ["ib-qdr_copy_1", "ib-qdr_memory_1"]
    # linear in the nodes: 576 nodes, 6 lines each, no route between pairs of nodes
    big = platforms.platform_xml(net, 576, 48, links=LinkChoice(node_channel=channel))
    assert big.count("\n") == 6 * 576 + 9
    with pytest.raises(PlatformError, match="choose topology = crossbar"):
        platforms.platform_xml(net, 8, 2, "torus", links=LinkChoice(node_channel=channel))


def test_link_knobs_need_the_smpi_stack_and_their_conditions(tmp_path: Path) -> None:
    for knob, value in (("rails", "2"), ("bandwidth_end", "high"), ("node_channel", "shared")):
        with pytest.raises(Unsupported, match="needs the smpi stack"):
            knob_setting(REAL, {knob: value}, 2, 2)
    smpi_stack = replace(REAL, id="smpi", family="smpi", version="SimGrid SMPI 3.32.0")
    setting = knob_setting(
        smpi_stack,
        {"rails": "2", "node_channel": "shared", "machine": "dell-m610"},
        4,
        2,
        2,
        tmp_path,
    )
    (xml,) = [text for path, text in setting.files if path.suffix == ".xml"]
    assert "ib-qdr" not in xml and 'bandwidth="235370611.183355Bps"' in xml  # gige x 2
    with pytest.raises(Unsupported, match="choose a machine"):
        knob_setting(smpi_stack, {"node_channel": "shared"}, 4, 2, 2, tmp_path)
    with pytest.raises(Unsupported, match="choose topology = crossbar"):
        knob_setting(
            smpi_stack,
            {"node_channel": "shared", "machine": "juropa", "topology": "fat-tree-1to1"},
            4,
            2,
            2,
            tmp_path,
        )
    with pytest.raises(Unsupported, match="not into ns-3's"):
        knob_setting(smpi_stack, {"rails": "2", "network_model": "ns3"}, 4, 2, 2, tmp_path)


# -- SimGrid runs ------------------------------------------------------------------------------


def test_links_are_full_duplex(smpi: Stack, tmp_path: Path) -> None:  # noqa: F811
    # 4 ranks on 2 nodes: rank 0 (node 0) plays with rank 2 (node 1), rank 1 (node 1) with rank 3
    # (node 0): every message has one going the other way at the same time.
    net = INTERCONNECTS["ib-qdr"]
    setting = knob_setting(
        smpi, {"computation": "off", "platform": "ib-qdr"}, 4, 2, 2, tmp_path / "platforms"
    )
    files = {path.suffix: (path, text) for path, text in setting.files}
    hosts = "node-0\nnode-1\nnode-1\nnode-0\n"
    one_way = {}
    for policy in ("SPLITDUPLEX", "SHARED"):  # SHARED: one link for both directions
        xml = files[".xml"][1].replace('"SPLITDUPLEX"', f'"{policy}"')
        ran = replace(setting, files=((files[".xml"][0], xml), (files[".hosts"][0], hosts)))
        record = pingpong_output(run_setting(smpi, tmp_path, pingpong_program(smpi), 4, ran))
        assert record["one_way_s"] == pytest.approx(record["slowest_one_way_s"], rel=1e-9)
        one_way[policy] = record["one_way_s"][-1] - net.latency
    # SMPI's 10 ns per MPI_Wtime is the only time outside the network model: < 1e-7 of it
    assert LARGEST / one_way["SPLITDUPLEX"] == pytest.approx(net.bandwidth, rel=1e-6)
    assert LARGEST / one_way["SHARED"] == pytest.approx(net.bandwidth / 2, rel=1e-6)


def test_on_node_messages_share_the_node_channel(smpi: Stack, tmp_path: Path) -> None:  # noqa: F811
    # 4 ranks on one dell-m610 node: two pairs exchange 4 MiB at once. Per pair each message has
    # this machine's loopback, 10 GB/s; shared, the two share the node's 19.2 GB/s (38.4 GB/s of
    # memory bandwidth over 2 bytes of traffic per byte copied).
    channel = links.node_channel_rate(machines.machine("dell-m610").bandwidth)
    assert round(channel / 1e6) == 19201
    knobs = {"computation": "off", "machine": "dell-m610"}
    for name, rate in (("per_pair", platforms.LOOPBACK_BANDWIDTH), ("shared", channel / 2)):
        record = pingpong_output(
            simulate(smpi, tmp_path, pingpong_program(smpi), 4, 4, node_channel=name, **knobs)
        )
        assert record["pairs"] == 2
        assert record["one_way_s"] == pytest.approx(record["slowest_one_way_s"], rel=1e-9)
        transfer = record["one_way_s"][-1] - platforms.LOOPBACK_LATENCY
        assert LARGEST / transfer == pytest.approx(rate, rel=1e-6), name
    # one pair alone: the loopback limits it (10 < 19.2 GB/s), as before
    alone = pingpong_output(
        simulate(smpi, tmp_path, pingpong_program(smpi), 2, 2, node_channel="shared", **knobs)
    )
    transfer = alone["one_way_s"][-1] - platforms.LOOPBACK_LATENCY
    assert LARGEST / transfer == pytest.approx(platforms.LOOPBACK_BANDWIDTH, rel=1e-6)


def test_dual_rail_halves_a_large_message(smpi: Stack, tmp_path: Path) -> None:  # noqa: F811
    net = INTERCONNECTS["ib-qdr"]
    one_way = {}
    for rails in ("1", "2"):
        record = pingpong_output(
            simulate(
                smpi,
                tmp_path,
                pingpong_program(smpi),
                2,
                computation="off",
                platform="ib-qdr",
                rails=rails,
            )
        )
        one_way[rails] = record["one_way_s"]
    for size, single, dual in zip(SIZES, one_way["1"], one_way["2"]):
        wire = (size + MESSAGE_OVERHEAD_BYTES) / net.bandwidth
        assert single == pytest.approx(net.latency + wire, rel=1e-9, abs=2e-10), size
        # the same latency, half the bandwidth term: a lone small message too fast by wire / 2
        assert dual == pytest.approx(net.latency + wire / 2, rel=1e-9, abs=2e-10), size
    # 4 MiB: half the time after the latency (up to SMPI's 0.1 ns of MPI_Wtime per one-way)
    assert (one_way["2"][-1] - net.latency) / (one_way["1"][-1] - net.latency) == pytest.approx(
        0.5, rel=1e-7
    )


def test_simulate_takes_the_link_knobs_from_the_command_line(
    smpi: Stack,  # noqa: F811
    tmp_path: Path,
) -> None:
    command = ["simulate", "pop", "--platform", "ib-qdr", "--nodes", "2", "--dry-run"]
    command += ["--rails", "1,2", "--bandwidth-end", "high", "--node-channel", "shared"]
    command += ["--machine", "dell-m610", "--out", str(tmp_path / "t.duckdb")]
    assert main(command) == 0
    written = sorted(path.name for path in (tmp_path / "t" / "platforms").glob("*.xml"))
    assert written == [
        "ib-qdr-2n1c-bw-high-2rails-node-19.2006GBps.xml",
        "ib-qdr-2n1c-bw-high-node-19.2006GBps.xml",
    ]


def test_the_smpi_model_keeps_ethernet_at_line_rate(tmp_path: Path) -> None:
    # its large-message bandwidth factor, 0.940694, is TCP's framing already (1448 / 1538)
    assert abs(0.940694 - links.TCP_MSS_BYTES / 1538) < 1e-3
    smpi_stack = replace(REAL, id="smpi", family="smpi", version="SimGrid SMPI 3.32.0")
    for model, bandwidth, stem in (
        ("cm02", INTERCONNECTS["gige"].bandwidth, "gige-2n1c"),
        ("smpi", 125e6, "gige-2n1c-line-rate"),
    ):
        setting = knob_setting(smpi_stack, {"network_model": model}, 2, 2, 1, tmp_path)
        (path, xml), _ = setting.files
        assert path.name == f"{stem}.xml" and f'bw="{bandwidth:.15g}Bps"' in xml, model
    qdr = knob_setting(
        smpi_stack, {"network_model": "smpi", "platform": "ib-qdr"}, 2, 2, 1, tmp_path
    )
    assert qdr.files[0][0].name == "ib-qdr-2n1c.xml"  # InfiniBand: no TCP framing to give back
