"""Issue 26: a call site without a source line is named by its function and the offset of the
return address in that function (`work+0x5`, as a debugger writes it), not the offset in the
object; without a symbol, by the object and the offset in it. Checked on a small program built
here without -g (no MPI needed: the frames are written as the profiler writes them)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from esmperf.profile.callsites import callsites

pytestmark = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("gcc", "nm", "addr2line", "strip")),
    reason="needs gcc and binutils",
)

PROGRAM = """
#include <stdio.h>
int work(int x) { return 3 * x + 1; }
int main(int argc, char **argv) { printf("%d\\n", work(argc)); return 0; }
"""


def symbol(binary: Path, name: str) -> tuple[int, int]:
    """(start, size) of a function, from the symbol table."""
    lines = subprocess.run(
        ["nm", "-S", str(binary)], capture_output=True, text=True, check=True
    ).stdout
    for line in lines.splitlines():
        fields = line.split()
        if fields[-1] == name:
            return int(fields[0], 16), int(fields[1], 16)
    raise AssertionError(f"{name} not in {binary}")


def site_label(binary: Path, offset: int) -> str:
    ranks = [
        {
            "rank": 0,
            "callsites": {
                "objects": [{"path": str(binary), "base": 0x5555_5555_4000}],
                "sites": [
                    {
                        "function": "MPI_Send",
                        "frames": [[0, offset]],
                        "calls": 3,
                        "time": 0.5,
                        "sent": 24,
                        "recv": 0,
                    }
                ],
            },
        }
    ]
    [site] = callsites(ranks)
    assert (site["calls"], site["sent"], site["ranks"]) == (3, 24, 1)
    return site["stack"][0]


def test_a_site_without_a_line_gives_its_offset_in_the_function(tmp_path: Path) -> None:
    (tmp_path / "prog.c").write_text(PROGRAM)
    binary = tmp_path / "prog"
    subprocess.run(
        ["gcc", "-O0", "-fPIE", "-pie", "-o", str(binary), str(tmp_path / "prog.c")], check=True
    )
    start, size = symbol(binary, "work")
    assert size > 5
    assert site_label(binary, start + 5) == "work+0x5"  # the return address, 5 bytes in
    main, _ = symbol(binary, "main")
    assert site_label(binary, main + 1) == "main+0x1"
    stripped = tmp_path / "stripped"
    subprocess.run(["strip", "-o", str(stripped), str(binary)], check=True)
    # no symbol: the object and the offset in it
    assert site_label(stripped, start + 5) == f"stripped+0x{start + 5:x}"
