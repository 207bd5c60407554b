"""Study files: matrix expansion (products, zips, defaults, "*"), stable keys, and one clear
error for each kind of bad study file."""

import tomllib
from pathlib import Path

import pytest

from conftest import esmperf
from esmperf.study.configuration import StudyError
from esmperf.study.file import load_study, study_from_dict
from esmperf.workloads import Workload, read_manifest

WORKLOADS = {
    "pop": Workload(
        "pop",
        "pop",
        "POP proxy",
        ("S", "M"),
        "S",
        "steps/s",
        True,
        {"solver": ("chrongear", "pcg")},
    ),
    "hycom": Workload("hycom", "hycom", "HYCOM proxy", ("S",), "S", "steps/s", True, {}),
}


def expand(text: str, tmp_path: Path):
    path = tmp_path / "study.toml"
    path.write_text(text)
    return load_study(path, default_stacks=("openmpi",), workloads=WORKLOADS)


def test_cartesian_product_in_order(tmp_path: Path) -> None:
    study = expand(
        """
name = "s"
[defaults]
stack = ["openmpi", "mpich"]
[[matrix]]
workload = "pop"
ranks = [1, 2, 4]
knobs = { transport = ["shm", "tcp"] }
""",
        tmp_path,
    )
    labels = [(c.stack, dict(c.knobs)["transport"], c.ranks) for c in study.configurations]
    assert len(labels) == 12
    assert labels[:4] == [
        ("openmpi", "shm", 1),
        ("openmpi", "shm", 2),
        ("openmpi", "shm", 4),
        ("openmpi", "tcp", 1),
    ]
    assert labels[-1] == ("mpich", "tcp", 4)
    assert all(c.size == "S" and c.fom.unit == "steps/s" for c in study.configurations)
    assert len({c.key for c in study.configurations}) == 12
    assert len({c.series for c in study.configurations}) == 4


def test_zipped_axes_and_overrides(tmp_path: Path) -> None:
    study = expand(
        """
name = "s"
[defaults]
repeats = { min = 2, max = 4 }
knobs = { transport = "shm" }
[[matrix]]
workload = "pop"
size = ["S", "M"]
ranks = [1, 4]
zip = [["size", "ranks"]]
options = { solver = ["pcg", "chrongear"] }
knobs = { single_copy = ["on", "off"] }
""",
        tmp_path,
    )
    points = [
        (c.size, c.ranks, dict(c.options)["solver"], dict(c.knobs)["single_copy"])
        for c in study.configurations
    ]
    assert points == [
        ("S", 1, "pcg", "on"),
        ("M", 4, "pcg", "on"),
        ("S", 1, "pcg", "off"),
        ("M", 4, "pcg", "off"),
        ("S", 1, "chrongear", "on"),
        ("M", 4, "chrongear", "on"),
        ("S", 1, "chrongear", "off"),
        ("M", 4, "chrongear", "off"),
    ]
    first = study.configurations[0]
    assert dict(first.knobs) == {"single_copy": "on", "transport": "shm"}  # defaults merged
    assert (first.repeats.min, first.repeats.max) == (2, 4)


def test_star_commands_and_duplicates(tmp_path: Path) -> None:
    study = expand(
        """
name = "s"
[[matrix]]
workload = "*"
ranks = 2
[[matrix]]
workload = "pop"
ranks = [2]
[[matrix]]
name = "ping"
command = "{build}/bench/latency 100"
fom = { regex = 'lat (\\S+)', unit = "us", higher_is_better = false }
ranks = 2
[[matrix]]
command = ["sleep", "0"]
launcher = false
ranks = 1
""",
        tmp_path,
    )
    names = [(c.workload, c.stack, c.kind) for c in study.configurations]
    assert names == [
        ("hycom", "openmpi", "workload"),
        ("pop", "openmpi", "workload"),
        ("ping", "openmpi", "command"),
        ("sleep", "none", "command"),
    ]
    ping = study.configurations[2]
    assert ping.command == ("{build}/bench/latency", "100")
    assert (ping.fom.source, ping.fom.unit, ping.fom.higher_is_better) == ("regex", "us", False)
    assert study.configurations[3].fom.source == "elapsed"


def test_keys_do_not_depend_on_repeats(tmp_path: Path) -> None:
    base = {"name": "s", "matrix": [{"workload": "pop", "ranks": [2]}]}
    more = {"name": "s", "matrix": [{"workload": "pop", "ranks": [2], "repeats": 20}]}
    one = study_from_dict(base, "a", workloads=WORKLOADS).configurations[0]
    two = study_from_dict(more, "b", workloads=WORKLOADS).configurations[0]
    assert one.key == two.key and one.repeats != two.repeats


def test_a_manifest_plugs_in(tmp_path: Path) -> None:
    manifest = tmp_path / "workload.toml"
    manifest.write_text(
        'name = "redist"\nexecutable = "redist-bench"\nsizes = ["S", "L"]\n'
        'fom_unit = "GB/s"\nhigher_is_better = true\n'
        '[options]\nmode = ["async", "sync"]\n'
    )
    workload = read_manifest(manifest)
    study = study_from_dict(
        {
            "name": "r",
            "matrix": [{"workload": "redist", "ranks": [4], "options": {"mode": ["sync"]}}],
        },
        "x",
        workloads={"redist": workload},
    )
    config = study.configurations[0]
    assert (config.size, dict(config.options), config.fom.unit) == ("S", {"mode": "sync"}, "GB/s")


BAD = [
    (
        'name = "s"\n[[matrix]]\nworkload = "pop"\nranks = [1]\nrepeat = 3\n',
        "unknown key 'repeat' in [[matrix]] 1 (did you mean 'repeats'?)",
    ),
    (
        'name = "s"\nsed = 1\n[[matrix]]\nworkload = "pop"\nranks = [1]\n',
        "unknown key 'sed' in the study (did you mean 'seed'?)",
    ),
    (
        'name = "s"\n[[matrix]]\nworkload = "cesm"\nranks = [1]\n',
        "unknown workload 'cesm': there is no native/apps/cesm/workload.toml",
    ),
    ('name = "s"\n[[matrix]]\nworkload = "pop"\nranks = []\n', "the axis ranks is empty"),
    ('name = "s"\n[[matrix]]\nworkload = "pop"\nranks = [1, 0]\n', "bad ranks 0"),
    ('name = "s"\n[[matrix]]\nworkload = "pop"\nranks = ["2"]\n', "bad ranks '2'"),
    ('name = "s"\n[[matrix]]\nworkload = "pop"\nranks = [1.5]\n', "bad ranks 1.5"),
    ('name = "s"\n[[matrix]]\nworkload = "pop"\n', "no ranks"),
    (
        'name = "s"\n[[matrix]]\nworkload = "pop"\nranks = [1, 2]\nsize = ["S"]\n'
        'zip = [["ranks", "size"]]\n',
        "zipped axes must have the same number of values",
    ),
    (
        'name = "s"\n[[matrix]]\nworkload = "pop"\nranks = [1]\nknobs = { transport = ["ib"] }\n',
        "knob transport has no value 'ib'",
    ),
    (
        'name = "s"\n[[matrix]]\nworkload = "pop"\nranks = [1]\nknobs = { fca = ["on"] }\n',
        "unknown knob 'fca'",
    ),
    (
        'name = "s"\n[[matrix]]\nworkload = "pop"\nranks = [1]\nsize = "XL"\n',
        "workload pop has no size 'XL'",
    ),
    (
        'name = "s"\n[[matrix]]\nworkload = "pop"\nranks = [1]\noptions = { solver = ["cg"] }\n',
        "option solver has no value 'cg'",
    ),
    (
        'name = "s"\n[[matrix]]\nworkload = "pop"\ncommand = "x"\nranks = [1]\n',
        "give either `workload`",
    ),
    (
        'name = "s"\n[[matrix]]\nworkload = "pop"\nranks = [1]\nstack = "lam"\n',
        "unknown MPI stack 'lam'",
    ),
    (
        'name = "s"\n[[matrix]]\ncommand = "x"\nranks = [1]\nfom = { regex = "(" }\n',
        "is not a valid regular expression",
    ),
    (
        'name = "s"\n[[matrix]]\nworkload = "pop"\nranks = [1]\nrepeats = { min = 5, max = 2 }\n',
        "max must be an integer at least min",
    ),
    ('name = "s"\n', "no [[matrix]] block"),
    ('name = "a b"\n[[matrix]]\nworkload = "pop"\nranks = [1]\n', "`name` must be a short name"),
    ('name = "s"\n[[matrix\n', "is not valid TOML"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_study_files(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(StudyError) as error:
        expand(text, tmp_path)
    assert message in str(error.value)
    assert str(tmp_path / "study.toml") in str(error.value)


def test_a_bad_study_file_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('name = "s"\n[[matrix]]\nworkload = "pop"\nranks = [0]\n')
    result = esmperf("study", str(path), "--out", str(tmp_path / "s.duckdb"))
    assert result.returncode == 1
    assert "bad ranks 0" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "s.duckdb").exists()


def test_missing_study_file(tmp_path: Path) -> None:
    with pytest.raises(StudyError, match="no such study file"):
        load_study(tmp_path / "none.toml", workloads=WORKLOADS)


def test_a_study_runs_only_on_the_simgrid_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    study = {"name": "s", "simgrid": "simgrid-4.1", "matrix": [{"workload": "pop", "ranks": [2]}]}
    monkeypatch.delenv("ESMPERF_SIMGRID", raising=False)
    with pytest.raises(StudyError, match=r"runs on SimGrid simgrid-4.1, not PATH's SimGrid: "):
        study_from_dict(study, "a.toml", workloads=WORKLOADS)
    monkeypatch.setenv("ESMPERF_SIMGRID", str(tmp_path / "simgrid-3.36"))
    with pytest.raises(StudyError, match=r"ESMPERF_SIMGRID=\$PWD/.venv/simgrid-4.1"):
        study_from_dict(study, "a.toml", workloads=WORKLOADS)
    monkeypatch.setenv("ESMPERF_SIMGRID", str(tmp_path / "simgrid-4.1"))
    assert study_from_dict(study, "a.toml", workloads=WORKLOADS).configurations
    with pytest.raises(StudyError, match="simgrid must name a SimGrid prefix"):
        study_from_dict(study | {"simgrid": "../x"}, "a.toml", workloads=WORKLOADS)


def test_ns3_on_simgrids_own_binding_gets_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ns3 runs on a SimGrid without esmperf's ns-3 patch get a note naming it; on the patched
    one (its .installed names the patches, scripts/setup_simgrid.sh) none; other models none."""
    prefix = tmp_path / "simgrid-4.1"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "smpicc").write_text("")
    monkeypatch.setenv("ESMPERF_SIMGRID", str(prefix))
    block = {"workload": "pop", "ranks": [2], "stack": ["smpi"]}

    def notes(model: str) -> list[str]:
        study = {"name": "s", "matrix": [block | {"knobs": {"network_model": model}}]}
        return study_from_dict(study, "a.toml", workloads=WORKLOADS).notes

    (prefix / ".installed").write_text("simgrid 4.1\n")  # built before the patch
    assert len(notes("ns3")) == 1 and "make setup-simgrid" in notes("ns3")[0]
    assert notes("cm02-tcp") == []
    (prefix / ".installed").write_text("simgrid 4.1, patches: 883f35230eacb40e\n")
    assert notes("ns3") == []


def test_shipped_studies_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    studies = Path(__file__).resolve().parents[1] / "studies"
    for path in sorted(studies.glob("**/*.toml")):
        if "reference" in path.relative_to(studies).parts:
            continue  # the seeds' reference data, not studies: tests/test_seed_claims.py
        simgrid = tomllib.loads(path.read_text()).get("simgrid")
        if simgrid:  # a study on `make setup-simgrid`'s SimGrid: as if it were there
            monkeypatch.setenv("ESMPERF_SIMGRID", str(tmp_path / simgrid))
        else:
            monkeypatch.delenv("ESMPERF_SIMGRID", raising=False)
        try:
            study = load_study(path, default_stacks=("openmpi",))
        except StudyError as error:  # a seed may name a workload not written yet
            assert "unknown workload" in str(error), str(error)
            continue
        assert study.name
