#!/usr/bin/env bash
# Build SimGrid from PyPI's source package into .venv/simgrid-$VERSION, idempotently (a second
# run does nothing): `bash scripts/setup_simgrid.sh` (`make setup-simgrid`). esmperf's `smpi`
# stack keeps Debian's SimGrid unless ESMPERF_SIMGRID names this prefix (docs/simulate.md,
# "SimGrid 4.1"). Only what smpicc, smpicxx, smpiff and smpirun need is built: the library with
# SMPI and, when libns3-dev is installed (root with apt-get installs it here), the ns-3 model;
# no Python or Java bindings, documentation, model checker, sthread, tests or examples. Measured
# here (2026-11-27, nice 19, -j2, load 3.5-5.6): 13.5 min (571 s user + 84 s system CPU, 0.9 GB
# peak), 111 MB installed; the 807 MB build tree is removed after the install.
# esmperf's patches to SimGrid (native/simnet/simgrid-$VERSION-*.patch) are applied to the
# source first: the ns-3 binding's one TCP connection per pair of hosts, kept open
# (docs/simulate.md, "TCP over Ethernet"), and mailboxes that match messages by source
# (docs/simulate.md, "Matching by source"). The install records their checksum: a changed patch
# rebuilds.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=4.1
PREFIX=.venv/simgrid-$VERSION
WORK=build/simgrid-$VERSION
JOBS=${JOBS:-2}
ROOT=$PWD

is_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

PATCHES=(native/simnet/simgrid-$VERSION-*.patch)
STAMP="simgrid $VERSION, patches: $(cat "${PATCHES[@]}" | sha256sum | cut -c1-16)"
if [[ -x $PREFIX/bin/smpirun && -f $PREFIX/.installed && $(cat "$PREFIX/.installed") == "$STAMP" ]]; then
    echo "setup-simgrid: SimGrid $VERSION installed ($PREFIX)"
    exit 0
fi

# ns-3's headers (Debian's libsimgrid 3.32 is built with ns-3 3.37: the same ns-3 for both).
if ! is_installed libns3-dev && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "setup-simgrid: installing libns3-dev"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends libns3-dev ||
        { apt-get -o DPkg::Lock::Timeout=300 update -q &&
            apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends libns3-dev; }
fi
if is_installed libns3-dev; then NS3=ON; else NS3=OFF; fi
echo "setup-simgrid: ns-3 model $NS3 (libns3-dev $(is_installed libns3-dev && echo present || echo missing))"

start=$(date +%s)
mkdir -p "$WORK"
if [[ ! -f $WORK/simgrid-$VERSION.tar.gz ]]; then
    .venv/bin/pip download -q --no-deps --no-binary :all: -d "$WORK" "simgrid==$VERSION"
fi
rm -rf "$WORK/src" "$WORK/obj" && mkdir -p "$WORK/src" "$WORK/obj"
tar -xzf "$WORK/simgrid-$VERSION.tar.gz" -C "$WORK/src" --strip-components=1
for patch in "${PATCHES[@]}"; do
    echo "setup-simgrid: applying $patch"
    patch -d "$WORK/src" -p1 --forward --quiet < "$patch"
done

# Fortran stays on (smpiff). Eigen3 (the BMF model) is not looked for: esmperf uses CM02/ns-3.
# from the build directory: SimGrid's configure leaves a test program in the working directory
(cd "$WORK/obj" && cmake -S ../src -B . -DCMAKE_INSTALL_PREFIX="$ROOT/$PREFIX" \
    -Denable_smpi=ON -Denable_fortran=ON -Denable_ns3=$NS3 \
    -Denable_python=OFF -Denable_java=OFF -Denable_documentation=OFF \
    -Denable_model-checking=OFF -Denable_sthread=OFF -Denable_smpi_papi=OFF \
    -Denable_testsuite_smpi_MPICH3=OFF -Denable_testsuite_smpi_MBI=OFF \
    -Denable_testsuite_McMini=OFF -Denable_compile_warnings=OFF -DEIGEN3_HINT=OFF)
nice -n 19 cmake --build "$WORK/obj" -j "$JOBS"
cmake --install "$WORK/obj"
echo "$STAMP" > "$PREFIX/.installed"
echo "setup-simgrid: SimGrid $VERSION in $PREFIX: built in $(($(date +%s) - start)) s," \
    "$(du -sh "$PREFIX" | cut -f1) installed; the build tree ($(du -sh "$WORK" | cut -f1)) removed"
rm -rf "$WORK/src" "$WORK/obj"  # the source package stays, for a rebuild
