/* esm_cli.h: the uniform command line of every workload (docs/workloads.md):
 *
 *     <program> --size S [--steps N] [--<option> <value> ...] [--help]
 *
 * Declare each option in turn (its value comes back at once, the default when absent), then
 * call esm_cli_end: it prints the usage for --help (exit 0) or one clear message for an
 * unknown option or a bad value (exit 1), on every rank alike. Values are parsed identically
 * on every rank, so no communication is needed.
 *
 *     esm_cli *cli = esm_cli_begin(argc, argv, "POP barotropic + baroclinic proxy");
 *     const esm_deck *deck = esm_cli_size(cli, pop_decks, n_pop_decks);
 *     long steps = esm_cli_int(cli, "steps", deck->steps, 1, 1000000, "time steps");
 *     const char *solver = esm_cli_choice(cli, "solver", "chrongear,pcg,pcsi", "solver");
 *     esm_cli_end(cli);
 */
#ifndef ESM_CLI_H
#define ESM_CLI_H
#include "esm_deck.h"

typedef struct esm_cli esm_cli;

esm_cli *esm_cli_begin(int argc, char **argv, const char *summary);

/* --size NAME among `decks` (default: the first). */
const esm_deck *esm_cli_size(esm_cli *cli, const esm_deck *decks, int ndecks);

/* --name VALUE, one of the comma-separated `choices`; the first is the default. */
const char *esm_cli_choice(esm_cli *cli, const char *name, const char *choices, const char *help);

/* --name N, an integer in [min, max]. */
long esm_cli_int(esm_cli *cli, const char *name, long fallback, long min, long max,
                 const char *help);

/* --name X, a real number in [min, max]. */
double esm_cli_real(esm_cli *cli, const char *name, double fallback, double min, double max,
                    const char *help);

/* --name TEXT, any non-empty text (a directory, a file name); `fallback` when absent. */
const char *esm_cli_text(esm_cli *cli, const char *name, const char *fallback, const char *help);

/* --name AxB, two positive integers (e.g. a block size 20x29). */
void esm_cli_pair(esm_cli *cli, const char *name, int *a, int *b, int max, const char *help);

/* A problem the caller found (a value of a form the core does not parse, options that
 * conflict): reported by esm_cli_end like the core's own, the first problem only. */
void esm_cli_problem(esm_cli *cli, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* The value as given on the command line, or NULL (for the result's "params"). */
const char *esm_cli_given(const esm_cli *cli, const char *name);

/* Check for unknown options, handle --help, report the first bad value. Collective exit on
 * error or help; frees nothing the caller holds. */
void esm_cli_end(esm_cli *cli);
#endif
