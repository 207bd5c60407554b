"""MPI stacks and how to tune them: discovery (stacks), native builds (build), knobs, and the
simulated clusters of the smpi stack (platforms: interconnects, machines: nodes)."""
