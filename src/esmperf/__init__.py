"""esmperf: a performance lab for earth-system MPI codes."""
