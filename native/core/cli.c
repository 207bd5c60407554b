/* The uniform command line: --key value pairs, declared one by one, checked at the end. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "esm_cli.h"
#include "esm_comm.h"

enum { MAX_ARGS = 64, TEXT = 8192 };

struct esm_cli {
    int nargs;
    const char *key[MAX_ARGS], *value[MAX_ARGS];
    int used[MAX_ARGS];
    int help;
    char error[1024];   /* the first problem found */
    char usage[TEXT];   /* one line per declared option */
    char defaults[MAX_ARGS][64]; /* the first value of each declared choice */
    int ndefaults;
    int usage_len;
    const char *summary;
};

/* The first problem found is the one reported. */
__attribute__((format(printf, 2, 3))) static void problem(esm_cli *cli, const char *format, ...)
{
    if (cli->error[0])
        return;
    va_list ap;
    va_start(ap, format);
    vsnprintf(cli->error, sizeof cli->error, format, ap);
    va_end(ap);
}

void esm_cli_problem(esm_cli *cli, const char *format, ...)
{
    if (cli->error[0])
        return;
    va_list ap;
    va_start(ap, format);
    vsnprintf(cli->error, sizeof cli->error, format, ap);
    va_end(ap);
}

esm_cli *esm_cli_begin(int argc, char **argv, const char *summary)
{
    esm_cli *cli = esm_calloc(1, sizeof *cli);
    cli->summary = summary;
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            cli->help = 1;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0 || !arg[2]) {
            problem(cli, "unexpected argument '%s': options are --name value (see --help)%s", arg,
                    "");
            continue;
        }
        if (a + 1 >= argc) {
            problem(cli, "option %s needs a value (see --help)%s", arg, "");
            continue;
        }
        if (cli->nargs == MAX_ARGS) {
            problem(cli, "too many options%s%s", "", "");
            break;
        }
        cli->key[cli->nargs] = arg + 2;
        cli->value[cli->nargs++] = argv[++a];
    }
    return cli;
}

/* The value given for --name (marking it used), or NULL. A repeated option: the last wins. */
static const char *lookup(esm_cli *cli, const char *name)
{
    const char *found = NULL;
    for (int a = 0; a < cli->nargs; a++)
        if (!strcmp(cli->key[a], name)) {
            cli->used[a] = 1;
            found = cli->value[a];
        }
    return found;
}

const char *esm_cli_given(const esm_cli *cli, const char *name)
{
    const char *found = NULL;
    for (int a = 0; a < cli->nargs; a++)
        if (!strcmp(cli->key[a], name))
            found = cli->value[a];
    return found;
}

/* Declare option --name for --help (its values, printf-style, and what it does); the value
 * given on the command line, or NULL. */
__attribute__((format(printf, 4, 5))) static const char *
declare(esm_cli *cli, const char *name, const char *help, const char *values, ...)
{
    char text[600];
    va_list args;
    va_start(args, values);
    vsnprintf(text, sizeof text, values, args);
    va_end(args);
    if (cli->usage_len < TEXT)
        cli->usage_len += snprintf(cli->usage + cli->usage_len, TEXT - cli->usage_len,
                                   "  --%-14s %-28s %s\n", name, text, help);
    return lookup(cli, name);
}

const esm_deck *esm_cli_size(esm_cli *cli, const esm_deck *decks, int ndecks)
{
    char names[512];
    esm_deck_names(decks, ndecks, names, sizeof names);
    const char *given =
        declare(cli, "size", "problem size deck (default: the first)", "{%s}", names);
    if (!given)
        return &decks[0];
    const esm_deck *deck = esm_deck_find(decks, ndecks, given);
    if (!deck) {
        problem(cli, "unknown size '%s': use one of %s", given, names);
        return &decks[0];
    }
    return deck;
}

const char *esm_cli_choice(esm_cli *cli, const char *name, const char *choices, const char *help)
{
    const char *given = declare(cli, name, help, "{%s}", choices);
    size_t first = strcspn(choices, ",");
    char *fallback =
        cli->defaults[cli->ndefaults < MAX_ARGS - 1 ? cli->ndefaults++ : cli->ndefaults];
    snprintf(fallback, 64, "%.*s", (int)first, choices);
    if (!given)
        return fallback;
    size_t length = strlen(given);
    for (const char *c = choices; *c;) {
        size_t n = strcspn(c, ",");
        if (n == length && !strncmp(c, given, n))
            return given;
        c += n + (c[n] == ',');
    }
    problem(cli, "invalid value --%s %s: use one of {%s}", name, given, choices);
    return fallback;
}

long esm_cli_int(esm_cli *cli, const char *name, long fallback, long min, long max,
                 const char *help)
{
    const char *given = declare(cli, name, help, "N in [%ld, %ld] (%ld)", min, max, fallback);
    if (!given)
        return fallback;
    char *end;
    errno = 0;
    long v = strtol(given, &end, 10);
    if (errno || end == given || *end || v < min || v > max) {
        problem(cli, "invalid value --%s %s: use an integer in [%ld, %ld]", name, given, min, max);
        return fallback;
    }
    return v;
}

double esm_cli_real(esm_cli *cli, const char *name, double fallback, double min, double max,
                    const char *help)
{
    const char *given = declare(cli, name, help, "X in [%g, %g] (%g)", min, max, fallback);
    if (!given)
        return fallback;
    char *end;
    errno = 0;
    double v = strtod(given, &end);
    if (errno || end == given || *end || !(v >= min && v <= max)) {
        problem(cli, "invalid value --%s %s: use a number in [%g, %g]", name, given, min, max);
        return fallback;
    }
    return v;
}

const char *esm_cli_text(esm_cli *cli, const char *name, const char *fallback, const char *help)
{
    const char *given = declare(cli, name, help, "TEXT (%s)", fallback);
    if (!given)
        return fallback;
    if (!given[0]) {
        problem(cli, "invalid value --%s '': use a non-empty value", name);
        return fallback;
    }
    return given;
}

void esm_cli_pair(esm_cli *cli, const char *name, int *a, int *b, int max, const char *help)
{
    const char *given = declare(cli, name, help, "AxB (%dx%d)", *a, *b);
    if (!given)
        return;
    int x, y, end = 0;
    if (sscanf(given, "%dx%d%n", &x, &y, &end) != 2 || given[end] || x < 1 || y < 1 || x > max ||
        y > max) {
        char what[128], form[64];
        snprintf(what, sizeof what, "--%s %s", name, given);
        snprintf(form, sizeof form, "two integers 1..%d as AxB, e.g. 20x16", max);
        problem(cli, "invalid value %s: use %s", what, form);
        return;
    }
    *a = x;
    *b = y;
}

void esm_cli_end(esm_cli *cli)
{
    if (cli->help) {
        if (esm_rank() == 0)
            printf("%s\n\nusage: %s --size S [--steps N] [--<option> <value> ...]\n\n%s",
                   cli->summary, esm_program(), cli->usage);
        esm_exit(ESM_EXIT_OK);
    }
    for (int a = 0; a < cli->nargs && !cli->error[0]; a++)
        if (!cli->used[a])
            problem(cli, "unknown option --%s (see %s --help)", cli->key[a], esm_program());
    if (cli->error[0])
        esm_fail("%s", cli->error);
}
