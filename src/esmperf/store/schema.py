"""The store's tables: their SQL, every column a writer fills, and the schema version
(docs/studies.md lists the columns; database.py says what each table holds)."""

SCHEMA_VERSION = "1"
# Columns added to schema 1 since it was first written: a store opened for writing gains the
# ones it lacks (NULL in its old rows), so an older store keeps every result; readers of a
# store opened read-only use row.get() for them. Adding a column keeps the schema version (an
# older esmperf reads and writes the store as before); changing or dropping one would not.
ADDED_COLUMNS = (
    ("repetition", "killed_after_result", "VARCHAR"),
    ("run", "launched_by", "VARCHAR"),
    ("profile_function", "recv_wait_calls", "BIGINT"),
    ("profile_function", "recv_wait_time", "DOUBLE"),
    ("profile_efficiency", "late_sender", "DOUBLE"),
    ("profile_efficiency", "late_sender_calls", "BIGINT"),
    ("profile_efficiency", "late_receives", "BIGINT"),
    ("profile_region_function", "recv_wait_calls", "BIGINT"),
    ("profile_region_function", "recv_wait_time", "DOUBLE"),
    # the interleaved round a repetition ran in, and the seed that shuffled the rounds
    # (study/rounds.py); NULL for repetitions not run in rounds (simulated side by side, Slurm)
    ("repetition", "round_number", "INTEGER"),
    ("session", "order_seed", "BIGINT"),
    # MPMD (profile/groups.py): each rank's program (argv, JSON) and MPI_APPNUM; a
    # communicator's members as world-rank ranges ("0-1,4"; an intercommunicator's local group,
    # remote_members its remote group); NULL in profiles from before
    ("profile_rank", "command", "VARCHAR"),
    ("profile_rank", "appnum", "INTEGER"),
    ("profile_comm", "members", "VARCHAR"),
    ("profile_comm", "remote_members", "VARCHAR"),
    # a simulated repetition's cost to the simulator (study/simulator_cost.py): the messages the
    # network model carried, the simulated and the CPU seconds, CPU seconds per message; NULL
    # for runs measured here and in stores from before
    ("repetition", "simulator_messages", "BIGINT"),
    ("repetition", "simulated_seconds", "DOUBLE"),
    ("repetition", "simulator_cpu_seconds", "DOUBLE"),
    ("repetition", "simulator_cpu_per_message", "DOUBLE"),
)
TAIL_CHARS = 20000  # how much of a run's stdout and stderr is kept

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS study_file (
    session_id INTEGER, name VARCHAR, title VARCHAR, description VARCHAR, seed VARCHAR,
    base_ranks INTEGER, metric VARCHAR, source VARCHAR, text VARCHAR);
CREATE TABLE IF NOT EXISTS session (
    session_id INTEGER PRIMARY KEY, started TIMESTAMP, finished TIMESTAMP, command VARCHAR,
    hostname VARCHAR, cpu_model VARCHAR, cores INTEGER, usable_cores INTEGER,
    memory_gib DOUBLE, kernel VARCHAR, os VARCHAR, python VARCHAR, esmperf_version VARCHAR,
    git_commit VARCHAR, git_dirty BOOLEAN, load_at_start DOUBLE);
CREATE TABLE IF NOT EXISTS run (
    run_key VARCHAR PRIMARY KEY, series VARCHAR, position INTEGER, matrix INTEGER,
    label VARCHAR, kind VARCHAR, workload VARCHAR, size VARCHAR, steps INTEGER,
    ranks INTEGER, ranks_per_node INTEGER, nodes INTEGER, stack VARCHAR, mpi_library VARCHAR,
    knobs VARCHAR, options VARCHAR, env VARCHAR, knob_env VARCHAR, launcher_args VARCHAR,
    argv VARCHAR, fom_source VARCHAR, fom_unit VARCHAR, higher_is_better BOOLEAN,
    profile VARCHAR, timeout DOUBLE, repeats VARCHAR, cores INTEGER, oversubscribed BOOLEAN,
    status VARCHAR, reason VARCHAR, identity VARCHAR, session_id INTEGER, launched_by VARCHAR);
CREATE TABLE IF NOT EXISTS repetition (
    run_key VARCHAR, rep INTEGER, kind VARCHAR, session_id INTEGER, started TIMESTAMP,
    elapsed DOUBLE, wall DOUBLE, fom DOUBLE, fom_unit VARCHAR, status VARCHAR,
    exit_code INTEGER, verification VARCHAR, load_before DOUBLE, load_after DOUBLE,
    busy_cores_before DOUBLE,
    oversubscribed BOOLEAN, result VARCHAR, stdout VARCHAR, stderr VARCHAR,
    profile_file VARCHAR, profile_error VARCHAR, killed_after_result VARCHAR,
    PRIMARY KEY (run_key, rep));
CREATE TABLE IF NOT EXISTS metric (
    run_key VARCHAR, rep INTEGER, name VARCHAR, value DOUBLE, PRIMARY KEY (run_key, rep, name));
CREATE TABLE IF NOT EXISTS profile (
    run_key VARCHAR, rep INTEGER, ranks INTEGER, mpi_library VARCHAR, abi VARCHAR,
    start_epoch DOUBLE, bin_width DOUBLE, command VARCHAR, knobs VARCHAR,
    fortran_warning VARCHAR, PRIMARY KEY (run_key, rep));
CREATE TABLE IF NOT EXISTS profile_rank (
    run_key VARCHAR, rep INTEGER, rank INTEGER, host VARCHAR, wall DOUBLE, mpi_time DOUBLE,
    io_write_calls BIGINT, io_write_bytes BIGINT, io_write_time DOUBLE,
    io_read_calls BIGINT, io_read_bytes BIGINT, io_read_time DOUBLE,
    overhead_calls BIGINT, overhead_seconds DOUBLE);
CREATE TABLE IF NOT EXISTS profile_function (
    run_key VARCHAR, rep INTEGER, rank INTEGER, function VARCHAR, calls BIGINT, time DOUBLE,
    time_min DOUBLE, time_max DOUBLE, sent BIGINT, recv BIGINT, calls_c BIGINT,
    calls_fortran BIGINT);
CREATE TABLE IF NOT EXISTS profile_histogram (
    run_key VARCHAR, rep INTEGER, rank INTEGER, function VARCHAR, bucket INTEGER,
    messages BIGINT);
CREATE TABLE IF NOT EXISTS profile_peer (
    run_key VARCHAR, rep INTEGER, rank INTEGER, peer INTEGER, direction VARCHAR,
    bytes BIGINT, messages BIGINT);
CREATE TABLE IF NOT EXISTS profile_comm (
    run_key VARCHAR, rep INTEGER, rank INTEGER, comm_id BIGINT, size INTEGER, name VARCHAR,
    created_by VARCHAR, calls BIGINT, time DOUBLE, bytes BIGINT);
CREATE TABLE IF NOT EXISTS profile_bin (
    run_key VARCHAR, rep INTEGER, rank INTEGER, bin INTEGER, start DOUBLE, width DOUBLE,
    mpi_time DOUBLE, calls BIGINT, sent BIGINT, recv BIGINT, io_write BIGINT, io_read BIGINT,
    io_time DOUBLE);
CREATE TABLE IF NOT EXISTS profile_efficiency (
    run_key VARCHAR, rep INTEGER, scope VARCHAR, load_balance DOUBLE,
    communication_efficiency DOUBLE, parallel_efficiency DOUBLE, useful_mean DOUBLE,
    useful_max DOUBLE, runtime DOUBLE, receive_wait DOUBLE, receive_wait_calls BIGINT,
    late_sender DOUBLE, late_sender_calls BIGINT, late_receives BIGINT,
    PRIMARY KEY (run_key, rep));
CREATE TABLE IF NOT EXISTS profile_program (
    run_key VARCHAR, rep INTEGER, program VARCHAR, command VARCHAR, appnum INTEGER,
    ranks VARCHAR, rank_count INTEGER, wall DOUBLE, mpi_time DOUBLE, mpi_percent DOUBLE,
    mpi_time_imbalance DOUBLE, scope VARCHAR, load_balance DOUBLE,
    communication_efficiency DOUBLE, parallel_efficiency DOUBLE);
CREATE TABLE IF NOT EXISTS profile_region (
    run_key VARCHAR, rep INTEGER, rank INTEGER, region VARCHAR, name VARCHAR, depth INTEGER,
    enters BIGINT, open INTEGER, wall DOUBLE, mpi_time DOUBLE, calls BIGINT, sent BIGINT,
    recv BIGINT);
CREATE TABLE IF NOT EXISTS profile_region_function (
    run_key VARCHAR, rep INTEGER, rank INTEGER, region VARCHAR, function VARCHAR, calls BIGINT,
    time DOUBLE, sent BIGINT, recv BIGINT, recv_wait_calls BIGINT, recv_wait_time DOUBLE);
CREATE TABLE IF NOT EXISTS profile_region_histogram (
    run_key VARCHAR, rep INTEGER, rank INTEGER, region VARCHAR, bucket INTEGER, messages BIGINT);
"""
TABLES = (
    "study_file",
    "session",
    "run",
    "repetition",
    "metric",
    "profile",
    "profile_rank",
    "profile_function",
    "profile_histogram",
    "profile_peer",
    "profile_comm",
    "profile_bin",
    "profile_efficiency",
)
# Tables of the regions of a profile (profile/regions.py).
REGION_TABLES = ("profile_region", "profile_region_function", "profile_region_histogram")
# Tables only some stores have: the Slurm jobs of a study run with --launcher slurm, the regions'
# tables in stores written before regions, the programs of a profile (MPMD) in stores written
# before them.
OPTIONAL_TABLES = ("slurm_job", "slurm_repetition", *REGION_TABLES, "profile_program")
RUN_COLUMNS = (
    "run_key",
    "series",
    "position",
    "matrix",
    "label",
    "kind",
    "workload",
    "size",
    "steps",
    "ranks",
    "ranks_per_node",
    "nodes",
    "stack",
    "mpi_library",
    "knobs",
    "options",
    "env",
    "knob_env",
    "launcher_args",
    "argv",
    "fom_source",
    "fom_unit",
    "higher_is_better",
    "profile",
    "timeout",
    "repeats",
    "cores",
    "oversubscribed",
    "status",
    "reason",
    "identity",
    "session_id",
    "launched_by",
)
REPETITION_COLUMNS = (
    "run_key",
    "rep",
    "kind",
    "session_id",
    "started",
    "elapsed",
    "wall",
    "fom",
    "fom_unit",
    "status",
    "exit_code",
    "verification",
    "load_before",
    "load_after",
    "busy_cores_before",
    "oversubscribed",
    "result",
    "stdout",
    "stderr",
    "profile_file",
    "profile_error",
    "killed_after_result",
    "round_number",
    "simulator_messages",
    "simulated_seconds",
    "simulator_cpu_seconds",
    "simulator_cpu_per_message",
)
SESSION_COLUMNS = (
    "session_id",
    "started",
    "finished",
    "command",
    "hostname",
    "cpu_model",
    "cores",
    "usable_cores",
    "memory_gib",
    "kernel",
    "os",
    "python",
    "esmperf_version",
    "git_commit",
    "git_dirty",
    "load_at_start",
    "order_seed",
)
# The Slurm jobs of a study run with --launcher slurm (slurm/campaign.py): created in the stores
# that need them.
SLURM_SCHEMA = """
CREATE TABLE IF NOT EXISTS slurm_job (
    job_id VARCHAR PRIMARY KEY, run_key VARCHAR, session_id INTEGER, reps VARCHAR,
    script VARCHAR, submitted TIMESTAMP, ended TIMESTAMP, state VARCHAR, exit_code VARCHAR,
    elapsed VARCHAR, node_list VARCHAR, reason VARCHAR, node VARCHAR, ingested BOOLEAN);
CREATE TABLE IF NOT EXISTS slurm_repetition (
    run_key VARCHAR, rep INTEGER, job_id VARCHAR, PRIMARY KEY (run_key, rep));
"""
