#!/usr/bin/env bash
# The whole test suite, several times in a row, while busy background processes keep the cores
# loaded (`make test-stress`; issue 21: no flaky test). A test that passes only on a quiet
# machine fails here. Usage: scripts/test_stress.sh [ROUNDS (3)] [BUSY PROCESSES (2)] [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
busy=${2:-2}
shift $(($# < 2 ? $# : 2))
pids=()
stop_busy() { ((${#pids[@]} == 0)) || kill "${pids[@]}" 2>/dev/null || true; }
trap stop_busy EXIT
for ((i = 0; i < busy; i++)); do
    # a spinning shell: one core's worth of load that never sleeps
    bash -c 'while :; do :; done' &
    pids+=($!)
done
echo "test-stress: $busy busy processes (${pids[*]}) on $(nproc) cores; $rounds rounds of the suite"
failed=0
for ((round = 1; round <= rounds; round++)); do
    started=$(date +%s)
    if .venv/bin/python -m pytest -q -rs -p no:cacheprovider "$@" tests; then
        verdict=passed
    else
        verdict=FAILED
        failed=$((failed + 1))
    fi
    echo "test-stress: round $round of $rounds $verdict in $(($(date +%s) - started)) s" \
        "(load average $(cut -d' ' -f1-3 /proc/loadavg))"
done
echo "test-stress: $((rounds - failed)) of $rounds rounds passed"
((failed == 0))
