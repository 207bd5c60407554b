#!/usr/bin/env python3
"""Generate every libesmprof wrapper from the one spec file (mpi.spec).

    gen_wrappers.py mpi.spec OUTDIR [MPI_H_PREPROCESSED]  ->  esm_functions.h  wrappers.c

With the stack's preprocessed mpi.h, only the calls it declares are wrapped (MPI-4 lines on an
MPI-3.1 library are left out), and every call whose large-count twin MPI_X_c it declares gets that
twin too: the same clauses over MPI_Count counts and MPI_Aint displacements (C only; Fortran has
no large-count binding before mpi_f08's, which the profiler does not wrap).

Per spec line it writes one accounting function (the clauses, in terms of C arguments), one C
wrapper (MPI_X -> PMPI_X) and one Fortran wrapper body shared by the entry points mpi_x,
mpi_x_, mpi_x__, MPI_X (-> the library's pmpi_x_) and the mpi_f08 entry point (Open MPI mpi_x_f08_,
MPICH mpi_x_f08ts_ or mpi_x_f08_).
The Fortran wrapper passes the caller's arguments through untouched (the library keeps its own
Fortran semantics) and converts to C only what the accounting reads. The mpi_f08 entry points
call the library's own symbol of the same name (found with RTLD_NEXT): MPICH's mpi_f08 layer
calls PMPI_ directly, like all of Open MPI's Fortran layers.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

HANDLE_F2C = {
    "MPI_Comm": "MPI_Comm_f2c", "MPI_Datatype": "MPI_Type_f2c", "MPI_Op": "MPI_Op_f2c",
    "MPI_Group": "MPI_Group_f2c", "MPI_Win": "MPI_Win_f2c", "MPI_File": "MPI_File_f2c",
    "MPI_Info": "MPI_Info_f2c", "MPI_Request": "MPI_Request_f2c",
    "MPI_Errhandler": "MPI_Errhandler_f2c", "MPI_Message": "MPI_Message_f2c",
}
# Clauses about requests, messages and communicators: the roles of their operands and the C
# statement they become. Roles: "in" a handle read before the call, "out" a handle the call
# writes, "status" a status the wrapper supplies when the caller ignores it, "index" an index
# that Fortran counts from 1.
CLAUSES = {
    "recvstatus": (["status"], "esm_recv_status(c, c->fid, c->comm, {0});"),
    "irecv": (["out"], "esm_req_post(c, *{0}, ESM_REQ_RECV, 0, 0);"),
    "precv": (["out"], "esm_req_post(c, *{0}, ESM_REQ_PRECV, 0, 0);"),
    "psend": (["out"], "esm_req_post(c, *{0}, ESM_REQ_PSEND, {send}, {to});"),
    "start": (["in"], "esm_req_start(c, *{0});"),
    "startall": (["", "in"], "for (int i = 0; i < {0}; i++) esm_req_start(c, {1}[i]);"),
    # completions: the call's time goes to the communicator of the requests it completes
    "wait": (["in", "status"], "c->comm = esm_req_complete(c, *{0}, {1});"),
    "test": (["in", "", "status"], "if (*{1}) c->comm = esm_req_complete(c, *{0}, {2});"),
    "waitall": (["", "in", "status"],
                "esm_completed done; done.n = 0; for (int i = 0; i < {0}; i++) "
                "esm_completed_add(&done, esm_req_complete(c, {1}[i], &{2}[i])); "
                "esm_completed_charge(c, &done);"),
    "testall": (["", "in", "", "status"],
                "if (*{2}) {{ esm_completed done; done.n = 0; for (int i = 0; i < {0}; i++) "
                "esm_completed_add(&done, esm_req_complete(c, {1}[i], &{3}[i])); "
                "esm_completed_charge(c, &done); }}"),
    "waitany": (["", "in", "index", "status"],
                "if (*{2} != MPI_UNDEFINED) c->comm = esm_req_complete(c, {1}[*{2}], {3});"),
    "testany": (["", "in", "index", "", "status"],
                "if (*{3} && *{2} != MPI_UNDEFINED) "
                "c->comm = esm_req_complete(c, {1}[*{2}], {4});"),
    "waitsome": (["", "in", "", "index", "status"],
                 "if (*{2} != MPI_UNDEFINED) {{ esm_completed done; done.n = 0; "
                 "for (int i = 0; i < *{2}; i++) "
                 "esm_completed_add(&done, esm_req_complete(c, {1}[{3}[i]], &{4}[i])); "
                 "esm_completed_charge(c, &done); }}"),
    "reqfree": (["in"], "esm_req_free(*{0});"),
    "mprobe": (["out", "status"], "esm_msg_probed(c, *{0});"),
    "improbe": (["out", "status", ""], "if (*{2}) esm_msg_probed(c, *{0});"),
    "mrecv": (["in", "status"], "esm_msg_received(c, *{0}, {1});"),
    "imrecv": (["in", "out"], "esm_msg_ireceived(c, *{0}, *{1});"),
    "newcomm": (["out"], "esm_comm_created(c, *{0});"),
    "freecomm": (["in"], "esm_comm_freed(c, *{0});"),
    "setname": (["", ""], "esm_comm_named({0}, {1});"),
    "coll": ([], "c->coll = 1;"),
    "peerbytes": (["", "", "", "", ""], "if (esm_trace_modes & ESM_MODE_TRACE) "
                  "esm_trace_alltoallv(c, {0}, {1}, {2}, {3}, {4});"),
    "pcoll": (["out"], "esm_req_post_coll(c, *{0}, {send}, {recv});"),
    "spawn": ([], "esm_spawned(c);"),
    "nofortran": ([], ""),
    "offload": ([], ""),
    "typefree": ([], "esm_types_changed();"),
}
CLAUSES["testsome"] = CLAUSES["waitsome"]
BYTE_CLAUSES = ("comm", "win", "send", "recv", "to", "from")


@dataclass
class Arg:
    ctype: str          # C type as written, without the name ("const int", "MPI_Status *")
    name: str
    length: str | None  # array length expression, "" for [] without one, None for scalars

    @property
    def base(self) -> str:
        return self.ctype.replace("const", "").replace("*", "").strip()

    @property
    def is_ptr(self) -> bool:
        return "*" in self.ctype

    @property
    def kind(self) -> str:
        if self.base == "void":
            return "buffer"
        if self.base == "char":
            return "string"
        if self.base == "MPI_Status":
            return "statuses" if self.length is not None else "status"
        if self.base in HANDLE_F2C:
            if self.length is not None:
                return "handles"
            return "handle_ptr" if self.is_ptr else "handle"
        if self.length is not None:
            return "array"
        return "int_ptr" if self.is_ptr else "scalar"

    def c_param(self) -> str:
        if self.length is not None:
            return f"{self.ctype} {self.name}[]"
        sep = "" if self.ctype.endswith("*") else " "
        return f"{self.ctype}{sep}{self.name}"

    def acct_param(self) -> str:
        if self.kind == "buffer":
            return f"const void *{self.name}"
        if self.length is not None:
            return f"{self.ctype} *{self.name}"
        return self.c_param()


@dataclass
class Call:
    name: str
    args: list[Arg]
    clauses: list[tuple[str, str]]
    roles: dict[str, str] = field(default_factory=dict)  # arg name -> in/out/status/index
    fortran: bool = True

    @property
    def lower(self) -> str:
        return self.name.lower()

    @property
    def callee(self) -> str:
        """What the C wrapper calls: PMPI_X, or for a collective the offload may take
        (prof_offload.c, simulated runs only) ESM_OFFLOADED(MPI_X)."""
        if any(key == "offload" for key, _ in self.clauses):
            return f"ESM_OFFLOADED({self.name})"
        return f"P{self.name}"

    def used(self) -> list[Arg]:
        """Arguments the accounting reads (in clause values or array lengths they need)."""
        text = " ".join([v for _, v in self.clauses] + trace_code(self))
        names = set(re.findall(r"[A-Za-z_]\w*", text))
        for a in self.args:
            if a.name in names and a.length:
                names |= set(re.findall(r"[A-Za-z_]\w*", a.length))
        return [a for a in self.args if a.name in names]


def split_top(text: str, sep: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([" 
        depth -= ch in ")]"
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [s.strip() for s in out if s.strip()]


def parse_arg(text: str) -> Arg:
    m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*(\[(.*)\])?$", text.strip())
    if not m:
        raise SystemExit(f"mpi.spec: cannot parse argument {text!r}")
    ctype = re.sub(r"\s+", " ", m.group(1)).strip().replace(" *", " *")
    return Arg(ctype=ctype, name=m.group(2), length=m.group(4) if m.group(3) else None)


def parse_spec(path: Path) -> list[Call]:
    calls = []
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        proto, _, clause_text = line.partition("|")
        m = re.match(r"^\s*int\s+(MPI_\w+)\s*\((.*)\)\s*$", proto)
        if not m:
            raise SystemExit(f"mpi.spec:{lineno}: expected 'int MPI_X(args) | clauses'")
        args = [parse_arg(a) for a in split_top(m.group(2), ",")]
        clauses = []
        for tok in split_top(clause_text, " "):
            key, _, value = tok.partition("=")
            clauses.append((key, value))
        call = Call(m.group(1), args, clauses, fortran=not any(k == "nofortran" for k, _ in clauses))
        for key, value in clauses:
            if key not in CLAUSES and key not in BYTE_CLAUSES:
                raise SystemExit(f"mpi.spec:{lineno}: unknown clause {key!r}")
            for role, operand in zip(CLAUSES.get(key, ([], ""))[0], value.split(",")):
                if role:
                    call.roles[operand] = role
        request = next((a for a in args if a.name == "request"), None)
        if request and request.kind == "handle_ptr":
            call.roles.setdefault("request", "out")  # traces record the request a call posts
        calls.append(call)
    return calls


def trace_code(call: Call) -> list[str]:
    """What a trace event records beyond the clauses, only when traces or call sites are on
    (prof_trace.c): the tag, the source a receive names, the request a call posts."""
    args = {a.name: a for a in call.args}
    out = []
    tag = "tag" if "tag" in args else "sendtag" if "sendtag" in args else None
    if tag:
        out.append(f"esm_tc.tag = {tag};")
    if "source" in args and "dest" not in args:
        out.append("esm_posted_from(c, source);")
    if "dest" in args and any(key == "psend" for key, _ in call.clauses):
        out.append("esm_posted_from(c, dest);")  # a persistent send: the peer of its starts
    request = args.get("request")
    if request and request.kind == "handle_ptr" and call.roles.get("request", "out") == "out":
        out.append("esm_tc.req = esm_req_key(*request);")
    return [f"if (esm_trace_modes) {{ {' '.join(out)} }}"] if out else []


def clause_code(call: Call) -> list[str]:
    """The accounting statements, in terms of the C arguments."""
    cl = dict(call.clauses)
    out = []
    if "comm" in cl:
        out.append(f"c->comm = esm_comm_of({cl['comm']});")
    out += trace_code(call)
    if "win" in cl:
        out.append(f"esm_use_win(c, {cl['win']});")
    if "pcoll" in cl:          # bytes counted at each start (esm_req_start)
        cl = {k: v for k, v in cl.items() if k not in ("send", "recv")}
    if "send" in cl and "psend" not in cl:
        if "to" in cl:
            out.append(f"esm_msg_to(c, {cl['to']}, {cl['send']});")
        else:
            out.append(f"c->sent += {cl['send']};")
    if "recv" in cl:
        if "from" in cl:
            out.append(f"esm_msg_from(c, {cl['from']}, {cl['recv']});")
        else:
            out.append(f"c->recv += {cl['recv']};")
    registers = ("irecv", "precv", "psend", "pcoll", "imrecv")
    if "comm" in cl and call.roles.get("request") == "out" and not set(registers) & set(cl):
        # a non-blocking send or collective: its completion's time goes to its communicator
        out.append("esm_req_post(c, *request, ESM_REQ_NONBLOCKING, 0, 0);")
    for key, value in call.clauses:
        if key in CLAUSES:
            full = dict(call.clauses)
            stmt = CLAUSES[key][1].format(*value.split(","), send=full.get("send", "0"),
                                           to=full.get("to"), recv=full.get("recv", "0"))
            if stmt:
                out.append(stmt)
    return out


def gen_header(calls: list[Call]) -> str:
    lines = ["/* Generated by gen_wrappers.py from mpi.spec: do not edit. */",
             "#ifndef ESM_FUNCTIONS_H", "#define ESM_FUNCTIONS_H", "enum esm_function {"]
    lines += [f"    ESM_{c.name}," for c in calls]
    lines += ["    ESM_NFUNC", "};", "extern const char *const esm_function_names[ESM_NFUNC];",
              "/* MPI-IO calls: their bytes are file I/O, not messages (+1: the calibration slot) */",
              "extern const unsigned char esm_function_is_file[ESM_NFUNC + 1];", "#endif"]
    return "\n".join(lines) + "\n"


def gen_acct(call: Call) -> list[str]:
    used = call.used()
    params = ", ".join(["esm_call *c"] + [a.acct_param() for a in used])
    body = clause_code(call)
    out = [f"static void acct_{call.name}({params})", "{"]
    out += [f"    {s}" for s in body] or ["    (void)c;"]
    out += ["}", ""]
    return out


def gen_c_wrapper(call: Call) -> list[str]:
    params = ", ".join(a.c_param() for a in call.args)
    names = ", ".join(a.name for a in call.args)
    out = [f"int {call.name}({params})", "{",
           f"    if (!esm_enter()) return {call.callee}({names});",
           f"    esm_call c = esm_call_begin(ESM_{call.name}, ESM_LANG_C);"]
    acct_args = []
    for a in call.used():
        role = call.roles.get(a.name, "")
        if a.kind == "status" and role == "status":
            out += [f"    MPI_Status {a.name}_own;",
                    f"    if ({a.name} == MPI_STATUS_IGNORE) {a.name} = &{a.name}_own;"]
        elif a.kind == "statuses" and role == "status":
            out += [f"    if ({a.name} == MPI_STATUSES_IGNORE) "
                    f"{a.name} = esm_tmp(&c, sizeof(MPI_Status) * (size_t)({a.length}));"]
        if role == "in" and a.kind == "handle_ptr":
            out.append(f"    {a.base} {a.name}_in = *{a.name};")
            acct_args.append(f"&{a.name}_in")
        elif role == "in" and a.kind == "handles":
            out.append(f"    {a.base} *{a.name}_in = esm_copy(&c, {a.name}, "
                       f"sizeof({a.base}) * (size_t)({a.length}));")
            acct_args.append(f"{a.name}_in")
        else:
            acct_args.append(a.name)
    out += [f"    int rc = {call.callee}({names});",
            "    esm_call_end(&c);",
            f"    if (rc == MPI_SUCCESS) acct_{call.name}({', '.join(['&c'] + acct_args)});",
            "    esm_leave(&c);", "    return rc;", "}", ""]
    return out


def f_param(a: Arg) -> str:
    if a.kind == "buffer":
        return f"void *f_{a.name}"
    if a.kind == "string":
        return f"char *f_{a.name}"
    if a.base in ("MPI_Aint", "MPI_Offset", "MPI_Count"):
        return f"{a.base} *f_{a.name}"
    return f"MPI_Fint *f_{a.name}"


def gen_f_wrapper(call: Call) -> list[str]:
    strings = [a for a in call.args if a.kind == "string"]
    params = [f_param(a) for a in call.args] + ["MPI_Fint *ierr"]
    params += [f"size_t f_{a.name}_len" for a in strings]
    used = call.used()
    before, after, acct_args = [], [], []
    real_args = {a.name: f"f_{a.name}" for a in call.args}
    for a in used:
        n, role = a.name, call.roles.get(a.name, "")
        k = a.kind
        if k == "buffer":
            before.append(f"const void *{n} = esm_fbuf(f_{n}, desc);")
        elif k == "string":
            before.append(f"char *{n} = esm_fstr(&c, f_{n}, f_{n}_len);")
        elif k == "scalar":
            before.append(f"{a.base} {n} = *f_{n};")
        elif k == "int_ptr":
            fix = f" if ({n}_v != MPI_UNDEFINED) {n}_v -= 1;" if role == "index" else ""
            after.append(f"int {n}_v = *f_{n};{fix} int *{n} = &{n}_v;")
        elif k == "array" and role == "index":
            after.append(f"int *{n} = esm_findices(&c, f_{n}, *{call.args[call.args.index(a) - 1].name});")
        elif k == "array":
            before.append(f"{a.ctype} *{n} = ({a.ctype} *)f_{n};")
        elif k == "handle":
            before.append(f"{a.base} {n} = {HANDLE_F2C[a.base]}(*f_{n});")
        elif k == "handle_ptr":
            (after if role == "out" else before).append(
                f"{a.base} {n}_v = {HANDLE_F2C[a.base]}(*f_{n}); {a.base} *{n} = &{n}_v;")
        elif k == "handles":
            before.append(f"int {n}_n = {a.length}; {a.base} *{n} = esm_tmp(&c, sizeof({a.base}) * (size_t){n}_n); "
                          f"for (int i = 0; i < {n}_n; i++) {n}[i] = {HANDLE_F2C[a.base]}(f_{n}[i]);")
        elif k == "status":
            before.append(f"MPI_Fint {n}_f[ESM_F_STATUS_SIZE], *{n}_fp = "
                          f"esm_fstatus_ignored(f_{n}) ? {n}_f : f_{n};")
            after.append(f"MPI_Status {n}_v; PMPI_Status_f2c({n}_fp, &{n}_v); MPI_Status *{n} = &{n}_v;")
            real_args[n] = f"{n}_fp"
        elif k == "statuses":
            before.append(f"MPI_Fint *{n}_fp = esm_fstatuses_ignored(f_{n}) ? esm_tmp(&c, "
                          f"sizeof(MPI_Fint) * ESM_F_STATUS_SIZE * (size_t)({a.length})) : f_{n};")
            after.append(f"MPI_Status *{n} = esm_fstatuses(&c, {n}_fp, {a.length});")
            real_args[n] = f"{n}_fp"
        acct_args.append(n)
    # handles converted before the call must precede arrays whose length uses them
    before.sort(key=lambda s: "esm_tmp" in s)
    real = ", ".join([real_args[a.name] for a in call.args] + ["ierr"] +
                     [f"f_{a.name}_len" for a in strings])
    passthrough = ", ".join([f"f_{a.name}" for a in call.args] + ["ierr"] +
                            [f"f_{a.name}_len" for a in strings])
    out = [f"static void f_{call.name}(esm_fptr real, int desc, {', '.join(params)})", "{",
           "    MPI_Fint ierr_own; if (!ierr) ierr = &ierr_own;  /* optional in mpi_f08 */",
           f"    if (!esm_enter()) {{ real({passthrough}); return; }}",
           f"    esm_call c = esm_call_begin(ESM_{call.name}, ESM_LANG_FORTRAN);"]
    out += [f"    {s}" for s in before]
    out += [f"    real({real});", "    esm_call_end(&c);",
            "    if (*ierr == MPI_SUCCESS) {"]
    out += [f"        {s}" for s in after]
    out += [f"        acct_{call.name}({', '.join(['&c'] + acct_args)});", "    }",
            "    esm_leave(&c);", "}"]
    fparams = ", ".join(params)
    fnames = ", ".join([f"f_{a.name}" for a in call.args] + ["ierr"] + [f"f_{a.name}_len" for a in strings])
    low = call.lower
    # mpi_f08 names: Open MPI mpi_x_f08_ (buffers by address); MPICH mpi_x_f08ts_ when the call
    # has a choice buffer (passed as a TS 29113 descriptor), else mpi_x_f08_.
    choice = any(a.kind == "buffer" and a.name != "baseptr" for a in call.args)
    mpich_f08 = f"{low}_f08ts_" if choice else f"{low}_f08_"
    out += [f"void {low}_({fparams})",
            f"{{ static esm_fptr r ESM_RANK_INVARIANT; if (!r) r = esm_fsym(\"p{low}_\"); f_{call.name}(r, 0, {fnames}); }}",
            f"void {low}({fparams}) __attribute__((alias(\"{low}_\")));",
            f"void {low}__({fparams}) __attribute__((alias(\"{low}_\")));",
            f"void {call.name.upper()}({fparams}) __attribute__((alias(\"{low}_\")));",
            "#ifdef OPEN_MPI",
            f"void {low}_f08_({fparams})",
            f"{{ static esm_fptr r ESM_RANK_INVARIANT; if (!r) r = esm_fsym(\"{low}_f08_\"); f_{call.name}(r, 0, {fnames}); }}",
            "#else",
            f"void {mpich_f08}({fparams})",
            f"{{ static esm_fptr r ESM_RANK_INVARIANT; if (!r) r = esm_fsym(\"{mpich_f08}\"); "
            f"f_{call.name}(r, {int(choice)}, {fnames}); }}",
            "#endif", ""]
    return out


def large_count_twin(call: Call) -> Call:
    """MPI_X_c: counts become MPI_Count, displacement arrays and disp_unit MPI_Aint (MPI-4.0)."""
    args = []
    for a in call.args:
        ctype = a.ctype
        if a.base == "int" and not a.is_ptr and a.length is None and a.name.endswith("count"):
            ctype = ctype.replace("int", "MPI_Count")
        elif a.base == "int" and a.length is not None and a.name.endswith("counts"):
            ctype = ctype.replace("int", "MPI_Count")
        elif a.base == "int" and a.length is not None and a.name.endswith("displs"):
            ctype = ctype.replace("int", "MPI_Aint")
        elif a.name == "disp_unit":
            ctype = ctype.replace("int", "MPI_Aint")
        args.append(Arg(ctype, a.name, a.length))
    return Call(call.name + "_c", args, call.clauses, dict(call.roles), fortran=False)


def declared_calls(preprocessed: Path) -> dict[str, list[str]]:
    """MPI_X -> its parameters as written, for every PMPI_X(...) the stack's mpi.h declares."""
    text = preprocessed.read_text()
    declared = {}
    for m in re.finditer(r"\bPMPI_(\w+)\s*\(", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        params, current, level = [], "", 0
        for ch in text[m.end():i - 1]:
            level += {"(": 1, ")": -1}.get(ch, 0)
            if ch == "," and level == 0:
                params.append(current.strip())
                current = ""
            else:
                current += ch
        declared["MPI_" + m.group(1)] = [*params, current.strip()]
    return declared


def match_const(call: Call, params: list[str]) -> Call:
    """A library that declares a pointer parameter without `const` where the standard has it (SimGrid
    SMPI: MPI_Compare_and_swap, MPI_Comm_spawn_multiple) gets the wrapper's parameter without it
    too: C refuses two prototypes that differ in qualifiers."""
    if len(params) != len(call.args):
        return call
    args = [Arg(a.ctype.replace("const", "").strip(), a.name, a.length)
            if "const" in a.ctype and "const" not in p else a for a, p in zip(call.args, params)]
    return Call(call.name, args, call.clauses, call.roles, fortran=call.fortran)


def select_calls(calls: list[Call], declared: dict[str, list[str]] | None) -> list[Call]:
    if declared is None:
        return calls
    out = []
    for call in calls:
        if call.name in declared:
            out.append(match_const(call, declared[call.name]))
            if call.name + "_c" in declared:
                out.append(large_count_twin(call))
    return out


def main() -> None:
    spec, outdir = Path(sys.argv[1]), Path(sys.argv[2])
    declared = declared_calls(Path(sys.argv[3])) if len(sys.argv) > 3 else None
    calls = select_calls(parse_spec(spec), declared)
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "esm_functions.h").write_text(gen_header(calls))
    src = ["/* Generated by gen_wrappers.py from mpi.spec: do not edit. */", '#include "esm_rank_state.h"', '#include "esmprof.h"',
           '#include "prof_trace.h"', "",
           "const char *const esm_function_names[ESM_NFUNC] = {"]
    src += [f'    "{c.name}",' for c in calls] + ["};", ""]
    src += ["const unsigned char esm_function_is_file[ESM_NFUNC + 1] = {"]
    src += [f"    {int(c.name.startswith('MPI_File_'))}, /* {c.name} */" for c in calls] + ["};", ""]
    for call in calls:
        src += gen_acct(call) + gen_c_wrapper(call) + (gen_f_wrapper(call) if call.fortran else [])
    (outdir / "wrappers.c").write_text("\n".join(src) + "\n")


if __name__ == "__main__":
    main()
