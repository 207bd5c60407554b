/* A growing JSON text (prof_json.h). */
#include "prof_json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void esm_json_put(esm_json *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (b->p && (size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        b->cap = 2 * (b->cap + (size_t)n + 64);
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
}

void esm_json_string(esm_json *b, const char *s)
{
    esm_json_put(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            esm_json_put(b, "\\%c", ch);
        else if (ch < 0x20)
            esm_json_put(b, "\\u%04x", ch);
        else
            esm_json_put(b, "%c", ch);
    }
    esm_json_put(b, "\"");
}
