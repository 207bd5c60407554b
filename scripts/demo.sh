#!/usr/bin/env bash
# The demo: run the default study (studies/demo.toml: every workload built here, 1-2-4 ranks,
# Open MPI and MPICH, shared memory vs TCP loopback, profiled) and write its HTML report.
# Resumable: run it again after an interruption and it carries on where it stopped.
set -euo pipefail
cd "$(dirname "$0")/.."

store=build/demo/demo.duckdb
.venv/bin/esmperf workloads
.venv/bin/esmperf study studies/demo.toml --out "$store"
report=$(.venv/bin/esmperf report "$store" | sed -n 's/^report: //p')
echo "Report: $(pwd)/$report"
echo "(open it in a browser; compare two stores with: .venv/bin/esmperf compare A.duckdb B.duckdb)"
