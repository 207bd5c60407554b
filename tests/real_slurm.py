"""A private, real Slurm for the tests (tests/test_slurm_real.py): munged, slurmctld and one
slurmd, started as the current user in a temporary directory, on free ports, with its own
slurm.conf (clients find it through SLURM_CONF). Not a double: Debian's slurmctld and slurmd
(`make setup` installs them as root; docs/slurm.md).

One node named `esmnode1` with this machine's CPUs, one partition `debug`; no cgroups, so it
runs in a container: proctrack/linuxproc (proctrack/pgid would leave running what the batch
script's timeout(1) starts, in a process group of its own, when Slurm ends a job), task/none.
No accounting
(accounting_storage/none: sacct says "Slurm accounting storage is disabled", as on many small
sites): accounting needs slurmdbd and a MySQL/MariaDB server, which this does not start, and
slurmctld configured for a slurmdbd that does not answer stops at its first start ("we have no
TRES from it").
"""

import getpass
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

SBIN = os.pathsep.join(["/usr/sbin", "/sbin", os.environ.get("PATH", "")])
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "sacct", "scancel", "sinfo", "scontrol", "srun", "salloc")
NODE = "esmnode1"
START_TIMEOUT = 30.0  # seconds for the node to come up idle


class SlurmUnavailable(Exception):
    """The private Slurm cannot start here; the message says why (the tests skip with it)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


SLURM_CONF = """\
# A private Slurm for esmperf's tests (tests/real_slurm.py)
ClusterName=esmperftest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/munge
AuthInfo=socket={dir}/munge/munge.socket
CredType=cred/munge
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/log/slurmctld.log
SlurmdLogFile={dir}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
KillWait=2
MinJobAge=300
InactiveLimit=0
NodeName={node} NodeHostname={hostname} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""


@dataclass
class PrivateSlurm:
    """`directory`: made here, removed by stop(). Not under pytest's temporary directories:
    munged wants world-execute on every directory above its socket, and those are 0700."""

    directory: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="esmperf-slurm-")))

    @property
    def conf(self) -> Path:
        return self.directory / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """A Slurm client command against this Slurm."""
        result = subprocess.run(
            list(argv),
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {result.stderr or result.stdout}")
        return result

    def node_state(self) -> str:
        return self.run("sinfo", "-h", "-n", NODE, "-o", "%T", check=False).stdout.strip()

    def log_tail(self) -> str:
        lines = []
        for name in ("munged", "slurmctld", "slurmd"):
            path = self.directory / "log" / f"{name}.log"
            if path.exists():
                lines += [f"{name}: {line}" for line in path.read_text().splitlines()[-3:]]
        return "\n".join(lines)

    def start(self) -> None:
        """Start the daemons and wait for the node to be idle; SlurmUnavailable (with what
        was started stopped again) when it cannot."""
        try:
            self._start()
        except SlurmUnavailable:
            self.stop()
            raise

    def _start(self) -> None:
        missing = [name for name in DAEMONS + CLIENTS if not shutil.which(name, path=SBIN)]
        if missing:
            raise SlurmUnavailable(
                f"{', '.join(missing)} not installed (as root on Debian: "
                "make setup, which installs slurmctld, slurmd and munge)"
            )
        self.directory.chmod(0o711)
        for sub in ("munge", "state", "spool", "log"):
            (self.directory / sub).mkdir(parents=True, exist_ok=True)
        (self.directory / "munge").chmod(0o711)  # clients of other users reach the socket
        key = self.directory / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        munged = [
            shutil.which("munged", path=SBIN) or "munged",
            f"--socket={self.directory}/munge/munge.socket",
            f"--key-file={key}",
            f"--pid-file={self.directory}/munged.pid",
            f"--log-file={self.directory}/log/munged.log",
            f"--seed-file={self.directory}/munge.seed",
        ]
        self._daemon(munged)
        self.conf.write_text(
            SLURM_CONF.format(
                ctld_port=_free_port(),
                slurmd_port=_free_port(),
                user=getpass.getuser(),
                dir=self.directory,
                node=NODE,
                hostname=socket.gethostname().split(".")[0],
                cpus=os.cpu_count() or 1,
            )
        )
        self._daemon([shutil.which("slurmctld", path=SBIN) or "slurmctld", "-i"])
        self._daemon([shutil.which("slurmd", path=SBIN) or "slurmd", "-N", NODE])
        deadline = time.monotonic() + START_TIMEOUT
        while self.node_state() != "idle":
            if time.monotonic() > deadline:
                raise SlurmUnavailable(
                    f"the private Slurm's node is "
                    f"{self.node_state() or 'not known'} after "
                    f"{START_TIMEOUT:g} s, not idle:\n{self.log_tail()}"
                )
            time.sleep(0.05)

    def _daemon(self, argv: list[str]) -> None:
        result = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=30)
        if result.returncode != 0:
            raise SlurmUnavailable(
                f"{Path(argv[0]).name} did not start: "
                f"{(result.stderr or result.stdout).strip()}\n"
                f"{self.log_tail()}"
            )

    def stop(self) -> None:
        """Cancel every job of this Slurm, then stop its daemons (those it started)."""
        if self.conf.exists():
            self.run("scancel", "-u", getpass.getuser(), check=False)
        stopping = []
        for name in ("slurmd", "slurmctld", "munged"):  # each takes about 2 s: all at once
            try:
                pid = int((self.directory / f"{name}.pid").read_text().strip())
                os.kill(pid, signal.SIGTERM)
                stopping.append(pid)
            except (OSError, ValueError):
                continue
        deadline = time.monotonic() + 10
        for pid in stopping:
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
        shutil.rmtree(self.directory, ignore_errors=True)
