"""The profile reader: read a profile file (read), summarise it (summary), print it (render);
its optional parts: call sites named (callsites), timeline traces read and written as Perfetto
JSON (trace), as a SimGrid time-independent trace (replay, replay_collectives) and replayed
(replay_run), `esmperf trace` (trace_cli)."""
