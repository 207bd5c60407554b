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
    for key, (steps, counts, note) in histories.items():
        assert key[2] >= 1 and re.fullmatch(r"\d+( \d+)*(/\d+( \d+)*)*", counts), key
        assert counts.count("/") + 1 == steps, key
        assert min(int(c) for c in re.split("[ /]", counts)) >= 1, key
        assert re.fullmatch(r"\d{4}-\d\d-\d\d on the smpi stack, \d+ s of CPU", note)
    again = tmp_path / "fold_history.c"
    again.write_text(c_source(workload, histories))
    clang_format = ROOT / ".venv" / "bin" / "clang-format"
    if clang_format.is_file():
        style = f"--style=file:{ROOT / '.clang-format'}"
        subprocess.run([str(clang_format), style, "-i", str(again)], check=True)
        assert again.read_text() == FILES[workload].read_text()
    assert recorded(again) == histories


def test_the_recorded_decks_options_and_rank_counts():
    """What docs/pflotran.md ("The folded counts") and docs/simulate.md say was recorded:
    pflotran's decks at fixed steps (options "") and with the deck's time stepping."""
    deck = "--time-stepping deck"
    assert sorted(recorded(FILES["pflotran"])) == [
        *[("100_100_100", "", ranks) for ranks in (4, 8, 16)],
        *[("100_100_100", deck, ranks) for ranks in (4, 8, 16)],
        *[("S", "", ranks) for ranks in (1, 2, 4, 8, 16)],
        *[("S", deck, ranks) for ranks in (1, 2, 4, 8, 16)],
    ]
    assert sorted(recorded(FILES["pop"])) == [("M", "", 1), ("S", "", 1), ("S", "", 4)]


def test_a_time_stepping_the_workload_has_not_is_refused():
    script = ROOT / "scripts" / "fold_history.py"
    command = [sys.executable, str(script), "pop", "--sizes", "S", "--ranks", "1"]
    done = subprocess.run([*command, "--time-stepping", "deck"], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip() == "--time-stepping deck: pop records fixed histories only"
