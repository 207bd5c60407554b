"""docs/profile-format.md names the profiler's knob prefixes: the same list as the C code."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def c_prefixes() -> list[str]:
    source = (ROOT / "native/prof/prof_output.c").read_text()
    body = re.search(r"static const char \*const prefixes\[\] = \{(.*?)\};", source, re.S).group(1)
    return re.findall(r'"([A-Z_]+)"', body)


def doc_prefixes() -> list[str]:
    doc = (ROOT / "docs/profile-format.md").read_text()
    row = next(line for line in doc.splitlines() if line.startswith("| `knobs` |"))
    listed = row.split("the prefixes", 1)[1].split("(the list", 1)[0]
    return re.findall(r"`([A-Z_]+_)`", listed)


def test_doc_lists_the_profilers_knob_prefixes():
    assert doc_prefixes() == c_prefixes()
    assert len(c_prefixes()) == 9
