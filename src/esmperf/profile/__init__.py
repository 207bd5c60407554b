"""The profile reader: read a profile file (read), summarise it (summary), print it (render);
its optional parts: call sites named (callsites), timeline traces read and written as Perfetto
JSON (trace), as a SimGrid time-independent trace and replayed (replay), `esmperf trace`
(trace_cli)."""
