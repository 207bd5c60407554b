"""The recorded iteration histories (native/apps/*/fold_history.c, written by
scripts/fold_history.py; docs/simulate.md, "Folded iteration counts"): the checked-in files
read back, every step has its counts, none zero (a zero would make the workload test
convergence), and writing them again gives the same file."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from fold_history import c_source, recorded  # noqa: E402

FILES = {
    "pflotran": ROOT / "native/apps/pflotran/fold_history.c",
    "pop": ROOT / "native/apps/pop/fold_history.c",
}


@pytest.mark.parametrize("workload", sorted(FILES))
def test_recorded_histories_are_whole_and_regenerate_the_same_file(workload, tmp_path):
    histories = recorded(FILES[workload])
    assert histories, f"{FILES[workload]}: no history read back"
    for (deck, ranks), (steps, counts, note) in histories.items():
        assert ranks >= 1 and re.fullmatch(r"\d+( \d+)*(/\d+( \d+)*)*", counts), (deck, ranks)
        assert counts.count("/") + 1 == steps, (deck, ranks)
        assert min(int(c) for c in re.split("[ /]", counts)) >= 1, (deck, ranks)
        assert re.fullmatch(r"\d{4}-\d\d-\d\d on the smpi stack, \d+ s of CPU", note)
    again = tmp_path / "fold_history.c"
    again.write_text(c_source(workload, histories))
    clang_format = ROOT / ".venv" / "bin" / "clang-format"
    if clang_format.is_file():
        style = f"--style=file:{ROOT / '.clang-format'}"
        subprocess.run([str(clang_format), style, "-i", str(again)], check=True)
        assert again.read_text() == FILES[workload].read_text()
    assert recorded(again) == histories


def test_the_recorded_decks_and_rank_counts():
    """What docs/simulate.md says was recorded."""
    assert sorted(recorded(FILES["pflotran"])) == [
        ("100_100_100", 4),
        ("100_100_100", 8),
        ("100_100_100", 16),
        ("S", 1),
        ("S", 2),
        ("S", 4),
        ("S", 8),
        ("S", 16),
    ]
    assert sorted(recorded(FILES["pop"])) == [("M", 1), ("S", 1), ("S", 4)]
