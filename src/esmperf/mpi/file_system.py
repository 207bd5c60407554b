"""The cluster's shared file system as a simulated rank reads it: the smpi knob `file_system`
(docs/simulate.md, "The file system").

The seeds' clusters read their input over NFS from the head node (the CESM deck's storage
slide: "NFS file system is shared from the head node"), one client at a time where a code reads
on one rank and broadcasts (CESM 1.0.3's coupler maps and PIO reads: docs/cesm.md "Start-up
input"). A read of n bytes costs that rank n / rate of simulated time (esm_fold.h,
esm_file_system_read); the rank waits, the others wait for it in their next collective.

The band: published single-client sequential NFSv3 reads over Gigabit Ethernet,
  low   60 MB/s  the file read from the server's disk (AEI Hannover ATLAS cluster wiki, "NFS":
                 dd of a 1 GB file, default rsize, MTU 1500)
  high 120 MB/s  the same file from the server's cache, the wire's rate (same source)
(Penguin Computing on the Beowulf list, 2007-08-23: 80 MB/s to one client, inside the band.) No
single-client rate over IPoIB or NFS/RDMA of the era was found; the deck does not say which
network carried its NFS, so its InfiniBand runs get the same band, the head node's disk being
the likelier ceiling. Not modelled: the file traffic sharing the network with MPI."""

FILE_SYSTEM_NAMES = ("none", "nfs-low", "nfs-high")
MB = 1e6  # dd's MB
READ_RATES = {"nfs-low": 60 * MB, "nfs-high": 120 * MB}  # bytes/s, one client
FILE_SYSTEM_VARIABLE = "ESM_FILE_SYSTEM_BANDWIDTH"


def file_system_environment(name: str) -> dict[str, str]:
    """What the workload core reads for the file system `name` (none: nothing)."""
    if name == "none":
        return {}
    return {FILE_SYSTEM_VARIABLE: f"{READ_RATES[name]:.6g}"}
