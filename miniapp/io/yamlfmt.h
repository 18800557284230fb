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

#endif
