/* miniapp/io/yamlfmt.c: YAML number and string scalars (see yamlfmt.h). */
#include "yamlfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *yaml_num(const char *fmt, double x)
{
  static char ring[16][40];
  static int  k;
  char       *b = ring[k++ % 16];
  if (isnan(x)) return ".nan";
  if (isinf(x)) return x > 0 ? ".inf" : "-.inf";
  snprintf(b, sizeof ring[0], fmt, x);
  return b;
}

const char *yaml_str(const char *s)
{
  static char  *ring[4];
  static size_t cap[4];
  static int    k;
  int           i    = k++ % 4;
  size_t        need = 4 * strlen(s) + 3; /* every character escaped at most to \xHH, the quotes, the end */
  if (cap[i] < need) {
    char *grown = realloc(ring[i], need);
    if (!grown) return "\"(not written: out of memory)\"";
    ring[i] = grown, cap[i] = need;
  }
  char  *b = ring[i];
  size_t o = 0;
  b[o++]   = '"';
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') b[o++] = '\\', b[o++] = (char)ch;
    else if (ch < 0x20 || ch == 0x7f) o += (size_t)snprintf(b + o, 5, "\\x%02x", ch);
    else b[o++] = (char)ch;
  }
  b[o++] = '"', b[o] = 0;
  return b;
}

uint64_t yaml_fnv1a64(const void *p, size_t n, uint64_t h)
{
  for (const unsigned char *b = p, *e = b + n; b < e; b++) h = (h ^ *b) * 1099511628211ull;
  return h;
}

void yaml_seal_line(const char *text, size_t n, char line[40])
{
  snprintf(line, 40, "seal: \"fnv1a64:%016llx\"\n", (unsigned long long)yaml_fnv1a64(text, n, YAML_FNV_START));
}
