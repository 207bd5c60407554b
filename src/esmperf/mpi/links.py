"""Links as built (docs/simulate.md, "Links as built"): what an interconnect's wire and its
adapter's host bus deliver to one MPI pair, a node's memory as the channel its on-node
messages share, and dual rail. Each figure is a named number with its source; platforms.py
builds the interconnects and the SimGrid platform files from them.

- Framing: TCP over Ethernet carries MSS payload bytes per MTU-sized frame plus the wire's
  per-frame bytes; InfiniBand carries an MTU of payload per packet plus its headers.
- Host bus: an adapter's PCI Express slot carries payload in TLPs of at most the negotiated
  Max Payload Size, each with its framing, sequence number, header and LCRC.
- An interconnect's bandwidth is the smaller of the two; where the Max Payload Size is not
  known (the seeds' servers), both ends of the range (the `bandwidth_end` knob).
"""

from dataclasses import dataclass

# -- Ethernet: TCP payload per frame on the wire -------------------------------------------------
# IEEE 802.3: a 1500-byte MTU frame occupies 1538 bytes of wire time: preamble and start delimiter
# 8, MAC header 14, frame check sequence 4, inter-frame gap 12.
ETHERNET_MTU_BYTES = 1500
ETHERNET_WIRE_OVERHEAD_BYTES = 38
# RFC 793 (TCP, 20-byte header), RFC 791 (IPv4, 20-byte header) and RFC 7323 (timestamps option,
# 10 bytes padded to 12; on by default in Linux, net.ipv4.tcp_timestamps = 1): 1500 - 52 = 1448.
TCP_MSS_BYTES = 1448


def tcp_payload_rate(line_rate: float) -> float:
    """Bytes/s of TCP payload a full-size-segment stream carries on an Ethernet of `line_rate`."""
    return line_rate * TCP_MSS_BYTES / (ETHERNET_MTU_BYTES + ETHERNET_WIRE_OVERHEAD_BYTES)


# -- InfiniBand: payload per packet -------------------------------------------------------------
# 26 bytes of headers per packet: local route header 8, base transport header 12, invariant CRC 4,
# variant CRC 2 (InfiniBand Architecture Specification vol. 1, chapters 5 and 7).
IB_PACKET_OVERHEAD_BYTES = 26
# The path MTU: 2048 on the QDR era's fabrics (IPoIB's datagram MTU there is 2044 = 2048 - 4,
# "In QDR, the default MTU value is 2044 ... In FDR onwards, 4096": The Linux Cluster,
# 'IPoIB working modes', 2015-04-04; Open MPI takes the smaller of the adapter's and the
# switch's: QLogic OFED+ host software user guide IB6054601-00 H, 'Improving performance of
# other MPIs over IB verbs'); 4096 from FDR on.
IB_QDR_MTU_BYTES = 2048
IB_MTU_BYTES = 4096


def ib_payload_rate(data_rate: float, mtu: int) -> float:
    """Bytes/s of payload on an InfiniBand link of `data_rate` (after line encoding)."""
    return data_rate * mtu / (mtu + IB_PACKET_OVERHEAD_BYTES)


# -- PCI Express: payload per TLP ---------------------------------------------------------------
# A memory-write TLP with a 64-bit address carries 24 bytes besides its payload: framing 2
# (STP and END symbols; Gen3's 4-byte STP token holds the sequence number instead), sequence
# number 2, 4-dword header 16, LCRC 4 (PCI Express Base Specification; Intel's 'Understanding
# PCI Express throughput', Arria 10 user guide: 5-7 dwords of overhead per TLP without ECRC;
# PLX PEX 8532 data book, 2007, 8.4.1.3: a header of 12 or 16 bytes). DLLPs (ACKs, flow control
# updates) are left out: the bound is an upper one.
PCIE_TLP_OVERHEAD_BYTES = 24
# Max Payload Size: 128 bytes, the PCIe default and many chipsets' (PLX PEX 8532 data book: its
# default MPS is 128 B; 'most systems use 128 B, 256 B or 512 B'), to 256 bytes, what Mellanox's
# ConnectX adapters advertise (Mellanox community, 'PCIe TLP payload size': ConnectX-3's INI
# default is 256 B; the seeds' ConnectX-2 taken alike). The seeds' servers' setting is not
# published: both ends, the low one the baseline.
PCIE_PAYLOAD_ENDS = {"low": 128, "high": 256}
BANDWIDTH_ENDS = tuple(PCIE_PAYLOAD_ENDS)


@dataclass(frozen=True)
class Pcie:
    """One PCI Express slot: its generation's transfer rate, its line encoding, its lanes."""

    name: str
    transfers: float  # per second per lane
    encoding: float  # data bits per transferred bit (8b/10b 0.8, 128b/130b 128/130)
    lanes: int

    @property
    def data_rate(self) -> float:
        """Bytes/s after line encoding, before TLP overhead."""
        return self.transfers * self.encoding * self.lanes / 8

    def payload_rate(self, end: str) -> float:
        """Bytes/s of payload with the Max Payload Size at `end` of its range."""
        payload = PCIE_PAYLOAD_ENDS[end]
        return self.data_rate * payload / (payload + PCIE_TLP_OVERHEAD_BYTES)


# The adapters' slots (PCI-SIG: Gen2 5 GT/s 8b/10b, Gen3 8 GT/s and Gen4 16 GT/s 128b/130b).
# ConnectX-2 QDR: PCIe 2.0 x8 (Mellanox, 'ConnectX-2 VPI single and dual port QSFP InfiniBand
# and Ethernet adapter card user manual', document 3156, 2011; Lenovo Press TIPS0778);
# ConnectX-3 FDR: PCIe 3.0 x8 (its user manual, rev 1.7, 2013); ConnectX-6 HDR: PCIe 4.0 x16.
PCIE_GEN2_X8 = Pcie("PCIe 2.0 x8", 5e9, 8 / 10, 8)
PCIE_GEN3_X8 = Pcie("PCIe 3.0 x8", 8e9, 128 / 130, 8)
PCIE_GEN4_X16 = Pcie("PCIe 4.0 x16", 16e9, 128 / 130, 16)


# -- On-node messages: the node's memory ------------------------------------------------------
# A message between two ranks of a node is a memory copy: it reads its n bytes and writes them
# (2n bytes of memory traffic, as STREAM's copy counts them; J. McCalpin, STREAM, 'counting
# bytes'). One copy: the single-copy transfer (KNEM, CMA) of the seeds' Open MPI 1.5 + KNEM;
# copy-in/copy-out through a shared buffer makes two, so the channel below is its upper bound.
MEMORY_BYTES_PER_MESSAGE_BYTE = 2
NODE_CHANNELS = ("per_pair", "shared")


def node_channel_rate(memory_bandwidth: float) -> float:
    """Bytes/s of on-node messages a node's memory carries at once (all its pairs together)."""
    return memory_bandwidth / MEMORY_BYTES_PER_MESSAGE_BYTE


# -- Dual rail ----------------------------------------------------------------------------------
# Open MPI's ob1 PML with one openib BTL per adapter: the RDMA part of a large message split over
# the BTLs by weight, each BTL's btl_bandwidth over their sum (ompi/mca/pml/ob1/pml_ob1_rdma.c,
# mca_pml_ob1_rdma_btls); small (eager) sends take the next BTL of the endpoint's array in turn
# (mca_bml_base_btl_array_get_next: round robin). Modelled as every link at `rails` times its
# bandwidth, the same latency: a striped large message and `rails` concurrent small ones are
# exact; a lone small message is too fast by (1 - 1/rails) x its bytes / bandwidth.
RAILS = ("1", "2")


@dataclass(frozen=True)
class LinkChoice:
    """The link knobs of one simulated run (all opt-in: the defaults give the old platforms)."""

    bandwidth_end: str = "low"  # which end of an interconnect's bandwidth range
    rails: int = 1  # adapters per node, each on its own fabric
    node_channel: float = 0.0  # bytes/s a node's on-node messages share (0: each pair its own)

    def suffix(self) -> str:
        """What the platform file's name adds for these choices ('' for the defaults)."""
        parts = [] if self.bandwidth_end == "low" else [f"bw-{self.bandwidth_end}"]
        parts += [f"{self.rails}rails"] if self.rails != 1 else []
        parts += [f"node-{self.node_channel / 1e9:.6g}GBps"] if self.node_channel else []
        return "".join(f"-{part}" for part in parts)


AS_BEFORE = LinkChoice()  # the defaults: the platforms of before these knobs, byte for byte
