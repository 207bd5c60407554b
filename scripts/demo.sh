#!/usr/bin/env bash
# The demo for now: profile the profiler's C test program with 4 ranks on each Debian MPI stack.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "The study runner arrives with issue 5; this demo profiles the profiler's C test program."
mkdir -p build/demo
for stack in openmpi mpich; do
    launcher="mpirun.$stack"
    program="build/$stack/tests/prof_test_c"
    command -v "$launcher" >/dev/null || continue
    .venv/bin/esmperf profile --stack "$stack" --out "build/demo/$stack.jsonl" \
        -- "$launcher" -np 4 "$program" build/demo
done
echo "Profiles: build/demo/*.jsonl (reprint one with: .venv/bin/esmperf show FILE)"
