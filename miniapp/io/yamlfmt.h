/* miniapp/io/yamlfmt.h: YAML scalars for the summary and the report, plain C.
 * Numbers: printf's "nan"/"inf" would read back as strings, so NaN and the
 * infinities are written .nan, .inf and -.inf. Strings: double-quoted, with
 * '"', '\' and control characters escaped (a deck name, a host name or a
 * verification message may hold them). Each call returns a fresh slot of a
 * small ring (16 numbers, 4 strings, each string's slot grown to fit), so
 * several can appear in one printf; not thread-safe. */
#ifndef MINIAPP_YAMLFMT_H
#define MINIAPP_YAMLFMT_H

const char *yaml_num(const char *fmt, double x); /* fmt: one double conversion, e.g. "%.6e" */
const char *yaml_str(const char *s);             /* the whole of s, however long */

#include <stddef.h>
#include <stdint.h>

/* 64-bit FNV-1a of n bytes, continuing from h (YAML_FNV_START to begin). */
#define YAML_FNV_START 1469598103934665603ull
uint64_t yaml_fnv1a64(const void *p, size_t n, uint64_t h);
/* The line a report ends with, "seal: \"fnv1a64:<16 hex digits>\"\n": the hash of
 * every byte of the report before that line, so that a report edited by hand
 * and not re-sealed is told from one a run wrote (scripts/report_checks.py). A
 * checksum, not a signature: whoever edits on purpose can recompute it. */
void yaml_seal_line(const char *text, size_t n, char line[40]);

#endif
