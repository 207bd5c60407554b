"""scripts/seed_table.py, which renders docs/seeds.md's claims table from the seed studies'
stores: every claim of every seed gets one row with a verdict (evaluated from a store that
names its seed, "not run" without one), and --write replaces only the marked section."""

import importlib.util
import re
from pathlib import Path

from esmperf.report.seed_claims import VERDICTS
from esmperf.report.seed_reference import load_references
from test_seed_claims import RUNS, make_claims_store

SCRIPT = Path(__file__).parent.parent / "scripts" / "seed_table.py"
HYCOM = "HYCOM Performance Benchmark and Profiling, HPC Advisory Council, January 2011"


def seed_table():  # noqa: ANN201 - the script as a module
    spec = importlib.util.spec_from_file_location("seed_table", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows(section: str, seed: str) -> list[str]:
    """The table rows of one seed's part of the section."""
    part = section.split(f"### {seed}: ", 1)[1].split("\n### ", 1)[0]
    return [line for line in part.splitlines() if line.startswith("| `")]


def verdict_of(row: str) -> str:
    found = re.search(r"\| \*\*([a-z ]+)\*\* \|", row)
    assert found, row
    return found.group(1)


def test_every_claim_has_a_row_with_its_verdict(tmp_path: Path) -> None:
    module = seed_table()
    make_claims_store(tmp_path / "hycom.duckdb", RUNS, HYCOM)
    make_claims_store(tmp_path / "other.duckdb", RUNS, "no such seed")
    section = module.render(tmp_path)
    references = {r.id: r for r in load_references()}
    for seed, reference in references.items():
        found = rows(section, seed)
        assert [row.split("`")[1] for row in found] == [c.id for c in reference.claims]
        verdicts = [verdict_of(row) for row in found]
        if seed == "hycom":  # evaluated from the store that names the seed
            assert set(verdicts) <= set(VERDICTS) and len(verdicts) == 10
            assert f"from {(tmp_path / 'hycom.duckdb').as_posix()}" in section
        else:
            assert set(verdicts) == {"not run"}
    total = sum(len(r.claims) for r in references.values())
    counted = re.search(r": (\d+) claims, (.*?)\. A claim", section)
    assert counted and int(counted.group(1)) == total
    assert sum(int(n) for n in re.findall(r"(\d+) [a-z ]+", counted.group(2))) == total


def test_a_seeds_stores_are_evaluated_together(tmp_path: Path) -> None:
    """A seed's runs split over two stores (its study and one on another SimGrid, as
    pflotran-ns3.toml adds to pflotran.toml) give the rows one store of them all gives."""
    module = seed_table()
    whole, split = tmp_path / "whole", tmp_path / "split"
    whole.mkdir(), split.mkdir()
    make_claims_store(whole / "hycom.duckdb", RUNS, HYCOM)
    gige = [run for run in RUNS if run.knobs.get("platform") == "gige"]
    others = [run for run in RUNS if run not in gige]
    assert gige and others
    make_claims_store(split / "hycom.duckdb", others, HYCOM)
    make_claims_store(split / "hycom-ns3.duckdb", gige, HYCOM)
    one, two = rows(module.render(whole), "hycom"), rows(module.render(split), "hycom")
    assert two == one and {verdict_of(row) for row in one} != {"not run"}
    names = (
        f"from {(split / 'hycom.duckdb').as_posix()} and {(split / 'hycom-ns3.duckdb').as_posix()}"
    )
    assert names in module.render(split)


def test_write_replaces_only_the_marked_section(tmp_path: Path) -> None:
    module = seed_table()
    doc = tmp_path / "seeds.md"
    doc.write_text(f"# before\n{module.GENERATED_FROM}\nold table\n{module.END_MARK}\nafter\n")
    assert module.main(["--results", str(tmp_path), "--write", str(doc)]) == 0
    text = doc.read_text()
    assert text.startswith(f"# before\n{module.GENERATED_FROM}\n") and text.endswith(
        f"{module.END_MARK}\nafter\n"
    )
    assert "old table" not in text and text.count("**not run**") == sum(
        len(r.claims) for r in load_references()
    )
    unmarked = tmp_path / "plain.md"
    unmarked.write_text("# no markers\n")
    assert module.main(["--results", str(tmp_path), "--write", str(unmarked)]) == 2
    assert unmarked.read_text() == "# no markers\n"
