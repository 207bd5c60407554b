"""MPI stacks and how to tune them: discovery (stacks), native builds (build), the knobs (knobs)
and what implements them (knob_setting: library_knobs for the real libraries, smpi_knobs for
SimGrid, collectives for the algorithms), and the simulated clusters of the smpi stack
(platforms: interconnects, machines: nodes)."""
