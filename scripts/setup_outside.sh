#!/usr/bin/env bash
# Install three real codes nobody here wrote, as a new user would, idempotently (a second run
# does nothing): `bash scripts/setup_outside.sh [debian] [oasis] [anuga]` (default: all three).
#  debian: ecTrans (ECMWF's spectral transforms, `ectrans-benchmark-dp`) and OASIS3-MCT with
#          its tutorial sources, from Debian, when root with apt-get (else: says what is missing);
#  oasis:  the OASIS3-MCT tutorial (an ocean and an atmosphere coupled, run as two programs
#          under one mpirun) built with this project's own recipe into build/outside/oasis,
#          against Debian's Open MPI (libpsmile is linked with it);
#  anuga:  ANUGA (tsunami and flood shallow water, Python + mpi4py) with its parallel extra in
#          its own venv .venv/anuga; mpi4py's PyPI wheel runs on Open MPI.
# docs/outside-codes.md says what each is and what `make try-outside` does with them.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(ectrans-utils liboasis3-dev liboasis3-doc libnetcdff-dev)
TUTORIAL=/usr/share/doc/liboasis3-doc/examples/tutorial
OASIS_DIR=build/outside/oasis
ANUGA_VENV=.venv/anuga
ANUGA_VERSION=4.1.0
MPI4PY_VERSION=4.1.2

is_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

install_debian() {
    local missing=() package
    for package in "${DEBIAN_PACKAGES[@]}"; do
        is_installed "$package" || missing+=("$package")
    done
    if ((${#missing[@]} == 0)); then
        echo "setup-outside: Debian packages present (${DEBIAN_PACKAGES[*]})"
        return
    fi
    if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
        echo "setup-outside: not root with apt-get: missing ${missing[*]} (install them, or the" \
            "tests that need them skip)"
        return
    fi
    echo "setup-outside: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=300 update -q
    apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "${missing[@]}"
}

# The tutorial's own Makefile expects an OASIS source tree (make.inc, its own libpsmile build);
# this recipe compiles its sources against Debian's installed libraries instead. The solved
# sources are the *_TP files (the others have the OASIS calls left out as exercises).
build_oasis_tutorial() {
    if [[ -x $OASIS_DIR/ocean && -x $OASIS_DIR/atmos && -f $OASIS_DIR/data/namcouple ]]; then
        echo "setup-outside: OASIS3-MCT tutorial built ($OASIS_DIR)"
        return
    fi
    if [[ ! -d $TUTORIAL || ! -f /usr/include/netcdf.mod ]] || ! command -v mpifort.openmpi >/dev/null; then
        echo "setup-outside: OASIS3-MCT tutorial not built: needs liboasis3-dev, liboasis3-doc," \
            "libnetcdff-dev and Open MPI (the debian part installs them as root)"
        return
    fi
    local src=$OASIS_DIR/src fc=(mpifort.openmpi -O2 -cpp -DUSE_DOUBLE_PRECISION)
    rm -rf "$OASIS_DIR" && mkdir -p "$src" "$OASIS_DIR/data"
    cp "$TUTORIAL"/*.F90 "$src/"
    zcat "$TUTORIAL/model1.F90_TP.gz" >"$src/model1.F90"
    zcat "$TUTORIAL/model2.F90_TP.gz" >"$src/model2.F90"
    for f in "$TUTORIAL"/data_oasis3/*.nc.gz; do zcat "$f" >"$OASIS_DIR/data/$(basename "$f" .gz)"; done
    cp "$TUTORIAL/data_oasis3/namcouple_TP" "$OASIS_DIR/data/namcouple"
    fc+=(-I/usr/include -I/usr/include/psmile.MPI1 -I/usr/include/mct -J "$src")
    local libs=(-lpsmile.MPI1 -lmct -lmpeu -lscrip -lnetcdff -lnetcdf)
    local model decomp
    for model in model1 model2; do
        decomp=-DDECOMP_APPLE # both models cut their grid in latitude bands (the tutorial's)
        local objs=()
        for unit in routine_hdlerr read_dimgrid read_grid decomp_def function_sent "$model"; do
            "${fc[@]}" "$decomp" -c "$src/$unit.F90" -o "$src/${model}_$unit.o"
            objs+=("$src/${model}_$unit.o")
        done
        "${fc[@]}" -o "$OASIS_DIR/$([[ $model == model1 ]] && echo ocean || echo atmos)" \
            "${objs[@]}" "${libs[@]}"
    done
    echo "setup-outside: OASIS3-MCT tutorial built: $OASIS_DIR/ocean (model1) and" \
        "$OASIS_DIR/atmos (model2), input data in $OASIS_DIR/data"
}

install_anuga() {
    if [[ -f $ANUGA_VENV/.installed ]]; then
        echo "setup-outside: ANUGA present ($ANUGA_VENV)"
        return
    fi
    python3 -m venv "$ANUGA_VENV"
    "$ANUGA_VENV/bin/pip" install -q "anuga[parallel]==$ANUGA_VERSION" "mpi4py==$MPI4PY_VERSION"
    "$ANUGA_VENV/bin/python" -c 'import anuga, mpi4py; print("setup-outside: anuga", anuga.__version__)'
    touch "$ANUGA_VENV/.installed"
}

parts=("$@")
((${#parts[@]})) || parts=(debian oasis anuga)
for part in "${parts[@]}"; do
    case $part in
        debian) install_debian ;;
        oasis) build_oasis_tutorial ;;
        anuga) install_anuga ;;
        *) echo "setup-outside: unknown part '$part' (debian, oasis, anuga)" >&2 && exit 2 ;;
    esac
done
