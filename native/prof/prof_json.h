/* A growing JSON text: what the profile's lines (prof_output.c) and the call-site member
 * (prof_callsite.c) are written into. */
#ifndef PROF_JSON_H
#define PROF_JSON_H

#include <stddef.h>

typedef struct esm_json {
    char *p;
    size_t len, cap;
} esm_json;

/* Append printf-style text. */
void esm_json_put(esm_json *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append `s` as a JSON string, quoted and escaped. */
void esm_json_string(esm_json *b, const char *s);

#endif
