#!/usr/bin/env bash
# Run the OASIS3-MCT tutorial (built by `make setup-outside` into build/outside/oasis) in the
# current directory: its ocean (model1) and atmosphere (model2) as two programs under one
# mpirun (MPMD), half of RANKS each: `scripts/oasis_tutorial.sh MPIRUN RANKS`.
# The input (grids, restart fields, remapping weights, namcouple) is copied here first: OASIS
# reads and writes its files in the working directory. The models' own log (10 lines per OASIS
# routine at the namcouple's NLOGPRT) goes to oasis-stdout.log. The run is verified when every
# rank of both models wrote "End of the program" in its own log (model1.out_1NN, model2.out_1NN)
# and each model wrote the coupled field it received (FRECVATM_model2_*, FRECVOCN_model1_*).
set -euo pipefail
if (($# != 2)) || (($2 < 2 || $2 % 2)); then
    echo "usage: $0 MPIRUN RANKS (an even number: half run the ocean, half the atmosphere)" >&2
    exit 2
fi
mpirun=$1 half=$(($2 / 2))
tutorial="$(cd "$(dirname "$0")/.." && pwd)/build/outside/oasis"
if [[ ! -x $tutorial/ocean || ! -x $tutorial/atmos ]]; then
    echo "error: the OASIS3-MCT tutorial is not built ($tutorial): run \`make setup-outside\`" >&2
    exit 2
fi
cp "$tutorial"/data/* .
start=$(date +%s.%N)
"$mpirun" -np "$half" "$tutorial/ocean" : -np "$half" "$tutorial/atmos" >oasis-stdout.log 2>&1 || {
    status=$?
    tail -n 40 oasis-stdout.log
    echo "error: mpirun exited with $status" >&2
    exit "$status"
}
end=$(date +%s.%N)
ended=$(cat model1.out_* model2.out_* | grep -c "End of the program" || true)
received=$(find . -maxdepth 1 \( -name 'FRECVATM_model2_*.nc' -o -name 'FRECVOCN_model1_*.nc' \) | wc -l)
if ((ended != 2 * half || received < 2)); then
    echo "verification FAILED: $ended of $((2 * half)) ranks ended, $received received fields written" >&2
    exit 1
fi
echo "oasis tutorial: ocean $half + atmosphere $half ranks, every rank ended, coupled fields" \
    "received by both; wall $(awk "BEGIN { printf \"%.3f\", $end - $start }") s"
