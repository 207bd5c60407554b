// The simulator's message count: loaded into SimGrid's smpimain (never into a simulated rank) by
// the smpi launcher (`smpirun -wrapper "env LD_PRELOAD=libesmsimcount.so"`), it counts every
// communication SimGrid's network model carries, the point-to-point messages the program sends and
// those SMPI's collectives send for it, and prints the count when the simulation ends:
//
//     esmsim: 1234 messages
//
// (docs/simulate.md, "What a simulation costs"). SMPI sends through SimGrid's kernel, not through
// the public s4u::Comm (whose signals it never fires), so the counter listens to the network
// model itself: s4u::Link::on_communication_state_change fires when a network action changes
// state, and each message's action leaves the started state exactly once, when its transfer ends
// (done, or failed). That public signal has the same type in SimGrid 3.32 and 4.1, so the counter
// builds against either (the kernel's CommImpl::on_start, which 3.32 fires as a transfer starts,
// is gone from 3.33: it counted the same messages in a run that ends, tests/test_simulator_cost.py).
#include <cstdio>
#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>

namespace
{
unsigned long long messages = 0; // one process runs every simulated rank, one at a time

__attribute__((constructor)) void count_messages()
{
    using State = simgrid::kernel::resource::Action::State;
    simgrid::s4u::Link::on_communication_state_change_cb(
        [](simgrid::kernel::resource::NetworkAction &, State previous) {
            if (previous == State::STARTED)
                ++messages;
        });
    simgrid::s4u::Engine::on_simulation_end_cb(
        [] { std::fprintf(stderr, "esmsim: %llu messages\n", messages); });
}
} // namespace
