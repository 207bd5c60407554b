// The simulator's message count: loaded into SimGrid's smpimain (never into a simulated rank) by
// the smpi launcher (`smpirun -wrapper "env LD_PRELOAD=libesmsimcount.so"`), it counts every
// communication SimGrid's network model starts, the point-to-point messages the program sends and
// those SMPI's collectives send for it, and prints the count when the simulation ends:
//
//     esmsim: 1234 messages
//
// (docs/simulate.md, "What a simulation costs"). SMPI sends through SimGrid's kernel, not through
// the public s4u::Comm (whose signals it never fires), so the counter listens to the kernel's
// CommImpl::on_start, fired once per message when its transfer starts in the network model.
// libsimgrid exports that signal but does not install CommImpl's header: it is named here by its
// symbol, with its type as SimGrid 3.32 declares it (src/kernel/activity/CommImpl.hpp). The
// library needs libsimgrid, which is therefore initialised (its signals constructed) before it.
#include <cstdio>
#include <simgrid/forward.h>
#include <simgrid/s4u/Engine.hpp>
#include <xbt/signal.hpp>

using CommStarted = simgrid::xbt::signal<void(simgrid::kernel::activity::CommImpl const &)>;
extern CommStarted comm_started asm("_ZN7simgrid6kernel8activity8CommImpl8on_startE");

namespace
{
unsigned long long messages = 0; // one process runs every simulated rank, one at a time

__attribute__((constructor)) void count_messages()
{
    comm_started.connect([](simgrid::kernel::activity::CommImpl const &) { ++messages; });
    simgrid::s4u::Engine::on_simulation_end_cb(
        [] { std::fprintf(stderr, "esmsim: %llu messages\n", messages); });
}
} // namespace
