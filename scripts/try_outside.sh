#!/usr/bin/env bash
# Try esmperf on three real codes nobody here wrote, as a new user would (`make try-outside`,
# after `make setup-outside`; docs/outside-codes.md): each once under `esmperf profile` (the
# profile, the program's output and esmperf's summary in results/outside/), then each in its
# small study (studies/ectrans.toml, oasis.toml, anuga.toml: results/<name>.duckdb, resumable)
# with its HTML report. Prints where everything is.
set -euo pipefail
cd "$(dirname "$0")/.."
ESMPERF=$PWD/.venv/bin/esmperf
OUT=$PWD/results/outside
OASIS=$PWD/build/outside/oasis
mkdir -p "$OUT"

profile() { # NAME COMMAND...: profile one run, its console into results/outside/NAME.log
    local name=$1
    shift
    if "$ESMPERF" profile --out "$OUT/$name.jsonl" -- "$@" >"$OUT/$name.log" 2>&1; then
        echo "try-outside: $name profiled: $OUT/$name.jsonl (esmperf show $OUT/$name.jsonl)"
    else
        echo "try-outside: $name FAILED under esmperf profile (exit $?): see $OUT/$name.log"
    fi
}

profile ectrans mpirun.openmpi -n 2 ectrans-benchmark-dp -t 79 -n 3 -f 5 -l 10
# OASIS reads and writes its files in the working directory: a fresh one with its input
rm -rf "$OUT/oasis-work" && mkdir "$OUT/oasis-work" && cp "$OASIS"/data/* "$OUT/oasis-work/"
(cd "$OUT/oasis-work" && profile oasis mpirun.openmpi -np 1 "$OASIS/ocean" : -np 1 "$OASIS/atmos")
profile anuga mpirun.openmpi -n 2 .venv/anuga/bin/python scripts/anuga_run.py

reports=()
for study in ectrans oasis anuga; do
    "$ESMPERF" study "studies/$study.toml" || echo "try-outside: study $study did not complete"
    if [[ -f results/$study.duckdb ]]; then
        "$ESMPERF" report "results/$study.duckdb" >/dev/null && reports+=("results/$study/report/index.html")
    fi
done
echo "try-outside: profiles and logs in $OUT; reports:"
printf '  %s\n' "${reports[@]}"
