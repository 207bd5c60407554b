"""The report's efficiency table of one workload and size: per profiled run, the POP CoE
metrics (pop_metrics.py: load balance, communication and parallel efficiency, from each rank's
time outside MPI), the receive wait and, for a traced run, the exact late-sender time. Not the scaling efficiency of the figures (performance
per rank against the base rank count)."""

from html import escape

from esmperf.report.analysis import Group


def efficiency_html(group: Group) -> str:
    """An HTML table, or "" when the group has no profiled run."""
    rows = []
    for label in group.series():
        for result, profile in group.profiled(label):
            metrics = profile.efficiency
            if not metrics:
                continue
            wait = profile.receive_wait
            top = wait.get("by_function", [])[:2] if wait else []
            wait_text = (
                f"{wait['time']:.4g} s ({wait['percent_of_mpi_time']:.1f} % of MPI "
                f"time; {', '.join(row['function'] for row in top)})"
                if wait and wait["calls"]
                else ("0" if wait else "not recorded")
            )
            late = metrics.get("late_sender")
            late_text = (
                f"{late:.4g} s ({metrics.get('late_sender_calls')} calls)"
                if late is not None
                else "no trace"
            )
            over = " (oversubscribed)" if result.oversubscribed else ""
            rows.append(
                f"<tr><td>{escape(label)}</td><td class='num'>{result.ranks}{over}</td>"
                f"<td>{escape(metrics['scope'] or 'run')}</td>"
                f"<td class='num'>{metrics['load_balance']:.3f}</td>"
                f"<td class='num'>{metrics['communication_efficiency']:.3f}</td>"
                f"<td class='num'>{metrics['parallel_efficiency']:.3f}</td>"
                f"<td class='num'>{escape(wait_text)}</td>"
                f"<td class='num'>{escape(late_text)}</td></tr>"
            )
            rows += [_program_row(program) for program in profile.programs]
    if not rows:
        return ""
    return (
        "<h3>Parallel efficiency (POP CoE metrics, profiled run)</h3>"
        "<p class='small'>Of the timed region when the run marked one, else of the whole "
        "run. Load balance = mean / max of the ranks' useful time (outside MPI); "
        "communication efficiency = max useful time / runtime (the longest rank); "
        "parallel efficiency = their product; 1 is ideal, POP calls below 0.8 a problem "
        "(higher is better). Receive wait (of the timed region too when the run marked "
        "one): time in blocking calls that completed a receive, an upper bound of "
        "late-sender time; late sender: the exact time receivers "
        "waited for sends that had not started, from the run's trace when it was traced "
        "(esmperf profile --trace; docs/profiler.md). A run of several programs (MPMD: "
        "mpirun ./ocean : ./atmos) also has one row per program, of its ranks alone.</p>"
        "<table><tr><th>configuration</th><th>ranks</th><th>of</th><th>load balance</th>"
        "<th>communication efficiency</th><th>parallel efficiency</th>"
        "<th>receive wait (all ranks)</th><th>late sender (all ranks)</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _program_row(program: dict) -> str:
    """One program of an MPMD run: its POP metrics over its own ranks."""
    figures = [program.get(k) for k in ("load_balance", "communication_efficiency")]
    figures.append(program.get("parallel_efficiency"))
    cells = "".join(
        f"<td class='num'>{value:.3f}</td>" if value is not None else "<td>-</td>"
        for value in figures
    )
    name = f"program {program['program']} (ranks {program['ranks']})"
    return (
        f"<tr><td class='small'>&nbsp;&nbsp;{escape(name)}</td>"
        f"<td class='num'>{program['rank_count']}</td>"
        f"<td>{escape(program.get('scope') or 'run')}</td>{cells}<td></td><td></td></tr>"
    )
