#!/usr/bin/env bash
# Set up esmperf, idempotently: a second run does nothing and takes a second.
#  - root with apt-get: install the Debian compilers, MPI stacks and Slurm that are missing;
#  - otherwise: install nothing system-wide and use the MPI found on PATH (e.g. `module load`);
#  - always: a venv in .venv with esmperf installed editable, then list the MPI stacks found.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
VENV=.venv
STAMP="$VENV/.esmperf-installed"
DEBIAN_PACKAGES=(build-essential gfortran cmake ninja-build python3-venv
                 openmpi-bin libopenmpi-dev mpich libmpich-dev
                 chromium strace  # chromium renders the HTML report in a test; strace checks TCP transport
                 libsimgrid-dev  # SimGrid SMPI (smpicc, smpiff, smpirun): `esmperf simulate`
                 otf2-tools)  # otf2-print reads `esmperf export --format otf2` in the tests
# Installed without their recommends: PETSc and MCT (liboasis3-dev ships it), the redistribution
# benchmark's peers (VecScatter, the Rearranger); Slurm 22.05 and munge, for the private
# slurmctld + slurmd the tests start as this user (tests/real_slurm.py, with its own slurm.conf
# and munge key: the system's are not used).
DEBIAN_PACKAGES_NO_RECOMMENDS=(libpetsc-real3.18-dev liboasis3-dev slurmctld slurmd munge)

is_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

install_debian_packages() {
    local missing=() missing_no_recommends=() package
    for package in "${DEBIAN_PACKAGES[@]}"; do
        is_installed "$package" || missing+=("$package")
    done
    for package in "${DEBIAN_PACKAGES_NO_RECOMMENDS[@]}"; do
        is_installed "$package" || missing_no_recommends+=("$package")
    done
    if ((${#missing[@]} + ${#missing_no_recommends[@]} == 0)); then
        echo "setup: Debian packages present"
        return
    fi
    echo "setup: installing ${missing[*]} ${missing_no_recommends[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    ((${#missing[@]} == 0)) || apt-get install -y -q "${missing[@]}"
    ((${#missing_no_recommends[@]} == 0)) ||
        apt-get install -y -q --no-install-recommends "${missing_no_recommends[@]}"
}

report_mpi_on_path() {
    local tool
    echo "setup: not root with apt-get: installing nothing system-wide; MPI tools on PATH:"
    for tool in mpicc mpifort mpirun mpiexec smpicc smpirun cmake ninja; do
        printf '  %-8s %s\n' "$tool" "$(command -v "$tool" || echo 'not found')"
    done
}

create_venv() {
    [[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV"
    if [[ ! -f "$STAMP" || pyproject.toml -nt "$STAMP" ]]; then
        "$VENV/bin/pip" install -q -e '.[test]'
        touch "$STAMP"
    fi
}

# Without root, cmake and ninja come from their PyPI wheels when the machine has none.
add_build_tools_to_venv() {
    local tool
    for tool in cmake ninja; do
        if ! command -v "$tool" >/dev/null && [[ ! -x "$VENV/bin/$tool" ]]; then
            "$VENV/bin/pip" install -q "$tool"
        fi
    done
}

if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    install_debian_packages
else
    report_mpi_on_path
fi
create_venv
add_build_tools_to_venv
"$VENV/bin/esmperf" stacks
