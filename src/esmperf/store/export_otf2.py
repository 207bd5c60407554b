"""`esmperf export --format otf2`: the traces of a store's traced repetitions (profiled with
ESMPROF_TRACE=1, e.g. `env = { ESMPROF_TRACE = "1" }` in the study file), one OTF2 archive
each (profile/otf2_export.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from esmperf.profile.otf2_export import write_otf2
from esmperf.profile.trace import read_trace, trace_dir
from esmperf.store.database import Store, StoreError


def export_store_traces(store: Store, directory: Path) -> list[Path]:
    """One OTF2 archive per traced repetition, `directory`/RUN_KEY-repN/traces.otf2."""
    rows = store.rows(
        "SELECT run_key, rep, profile_file FROM repetition WHERE kind = 'profile' "
        "AND profile_file IS NOT NULL ORDER BY run_key, rep"
    )
    traced = [row for row in rows if trace_dir(Path(row["profile_file"])).is_dir()]
    if not traced:
        raise StoreError(
            f"{store.path} has no traced repetition (no PROFILE.trace/ beside its profiles): "
            'set ESMPROF_TRACE = "1" in the study\'s env and run the study again'
        )
    written = []
    for row in traced:
        archive = directory / f"{row['run_key']}-rep{row['rep']}"
        if (archive / "traces.otf2").is_file():
            shutil.rmtree(archive)  # this export's own earlier archive
        written.append(write_otf2(read_trace(Path(row["profile_file"])), archive))
    return written
