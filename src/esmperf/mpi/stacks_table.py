"""The table of `esmperf stacks`: the MPI stacks found and where their tools are."""

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from esmperf.mpi.stacks import Discovery, library_name


def render_stacks(discovery: Discovery, console: Console) -> None:
    table = Table(title="MPI stacks", title_justify="left", title_style="bold")
    for column in ("id", "family", "version", "mpicc, mpifort, mpirun", "in"):
        table.add_column(column, overflow="fold")
    for stack in discovery.stacks:
        tools = [stack.mpicc, stack.mpifort, stack.mpirun]
        table.add_row(
            stack.id,
            stack.family,
            escape(library_name(stack.version)),
            "\n".join(_in_dir(tool, stack.bin_dir) for tool in tools),
            str(_relative_to_cwd(stack.bin_dir)),
        )
    if discovery.stacks:
        console.print(table)
    else:
        console.print(
            "[bold yellow]no MPI stack found:[/] run `make setup` (as root on Debian), "
            "`make setup-more-mpi`, or `module load` an MPI so that mpicc is on PATH"
        )
    for problem in discovery.problems:
        console.print(f"[yellow]skipped:[/] {escape(problem)}")


def _relative_to_cwd(path: Path) -> Path:
    return path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path


def _in_dir(tool: Path | None, directory: Path) -> str:
    """A tool's name when it is in `directory`, else its path; "-" for none."""
    if tool is None:
        return "-"
    return tool.name if tool.parent == directory else str(tool)
