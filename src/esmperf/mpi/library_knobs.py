"""Knob values as each real MPI library's variables and launcher options: Open MPI (MCA
parameters), MPICH (MPIR_CVAR_*, UCX/OFI for TCP) and Intel MPI (I_MPI_*). One mapper per
library, registered in MAPPERS; knob_setting.py picks it from the stack's library."""

from esmperf.mpi.collectives import (
    MPICH_5_ONLY,
    MPICH_5_RENAMED,
    MPICH_ALGORITHMS,
    OPENMPI_5_ONLY,
    OPENMPI_ALGORITHMS,
)
from esmperf.mpi.knobs import Implementation, KnobSetting, Unsupported


def _openmpi(impl: Implementation, name: str, value: str, ranks: int, cores: int) -> KnobSetting:
    shm_btl = "vader" if impl.major < 5 else "sm"
    if name == "transport":
        if value == "shm":
            return KnobSetting({"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": f"self,{shm_btl}"})
        return KnobSetting(
            {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,tcp", "OMPI_MCA_btl_tcp_if_include": "lo"}
        )
    if name == "single_copy":
        if impl.major < 5:
            mechanism = "cma" if value == "on" else "none"
            return KnobSetting({"OMPI_MCA_btl_vader_single_copy_mechanism": mechanism})
        return KnobSetting({"OMPI_MCA_smsc": "cma" if value == "on" else "^cma"})
    if name == "connections":
        return KnobSetting({"OMPI_MCA_mpi_preconnect_mpi": "1" if value == "eager" else "0"})
    if name == "binding":
        policy = value
        if value != "none" and ranks > cores:
            policy += ":overload-allowed"  # otherwise Open MPI refuses more ranks than cores
        return KnobSetting({}, ("--bind-to", policy))
    op = name.removesuffix("_algorithm")
    if value == "default":
        return KnobSetting()
    number = OPENMPI_ALGORITHMS[op].get(value)
    if number is None:
        raise Unsupported(
            f"Open MPI has no {value} algorithm for MPI_{op.capitalize()} "
            f"(it has: {', '.join(OPENMPI_ALGORITHMS[op])})"
        )
    if (op, value) in OPENMPI_5_ONLY and impl.major < 5:
        raise Unsupported(f"the {value} {op} algorithm needs Open MPI 5")
    return KnobSetting(
        {
            "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
            f"OMPI_MCA_coll_tuned_{op}_algorithm": str(number),
        }
    )


def _mpich(impl: Implementation, name: str, value: str, ranks: int, cores: int) -> KnobSetting:
    if name == "transport":
        if value == "shm":
            return KnobSetting({"MPIR_CVAR_NOLOCAL": "0"})
        if "ofi" in impl.netmods:  # the PyPI wheel: its bundled UCX fails on lo, OFI works
            return KnobSetting(
                {
                    "MPIR_CVAR_NOLOCAL": "1",
                    "MPIR_CVAR_CH4_NETMOD": "ofi",
                    "FI_PROVIDER": "tcp",
                    "FI_TCP_IFACE": "lo",
                }
            )
        if "ucx" in impl.netmods:  # Debian's ch4:ucx
            return KnobSetting(
                {"MPIR_CVAR_NOLOCAL": "1", "UCX_TLS": "tcp,self", "UCX_NET_DEVICES": "lo"}
            )
        return KnobSetting({"MPIR_CVAR_NOLOCAL": "1"})  # ch3: nemesis' TCP netmod
    if name == "single_copy":
        if impl.version < (4, 2):
            raise Unsupported(
                f"MPICH {'.'.join(map(str, impl.version))} has no CMA single copy (only XPMEM, "
                "which needs the xpmem kernel module): single_copy needs MPICH 4.2 or later"
            )
        return KnobSetting({"MPIR_CVAR_CH4_CMA_ENABLE": "1" if value == "on" else "0"})
    if name == "connections":
        raise Unsupported("MPICH has no switch for connection set-up (eager or on demand)")
    if name == "binding":
        return KnobSetting({}, ("-bind-to", value))
    op = name.removesuffix("_algorithm")
    if value == "default":
        return KnobSetting()
    algorithm = MPICH_ALGORITHMS[op].get(value)
    if algorithm is None:
        raise Unsupported(
            f"MPICH has no {value} algorithm for MPI_{op.capitalize()} "
            f"(it has: {', '.join(MPICH_ALGORITHMS[op])})"
        )
    if (op, value) in MPICH_5_ONLY and impl.major < 5:
        raise Unsupported(f"the {value} {op} algorithm needs MPICH 5")
    if impl.major >= 5:
        algorithm = MPICH_5_RENAMED.get((op, value), algorithm)
    # DEVICE_COLLECTIVES=none: the ch4 device must not override the algorithm asked for.
    return KnobSetting(
        {
            "MPIR_CVAR_DEVICE_COLLECTIVES": "none",
            f"MPIR_CVAR_{op.upper()}_INTRA_ALGORITHM": algorithm,
        }
    )


def _impi(impl: Implementation, name: str, value: str, ranks: int, cores: int) -> KnobSetting:
    if name == "transport":
        if value == "shm":
            return KnobSetting({"I_MPI_FABRICS": "shm:ofi"})
        return KnobSetting({"I_MPI_FABRICS": "ofi", "FI_PROVIDER": "tcp", "FI_TCP_IFACE": "lo"})
    if name == "connections":
        return KnobSetting({"I_MPI_DYNAMIC_CONNECTION": "0" if value == "eager" else "1"})
    if name == "binding":
        return KnobSetting(
            {
                "I_MPI_PIN": "0" if value == "none" else "1",
                **({} if value == "none" else {"I_MPI_PIN_DOMAIN": value}),
            }
        )
    raise Unsupported(f"{name} is not mapped for Intel MPI yet")


MAPPERS = {"openmpi": _openmpi, "mpich": _mpich, "impi": _impi}
