/* miniapp/yamlfmt.c: YAML number and string scalars (see yamlfmt.h). */
#include "yamlfmt.h"

#include <math.h>
#include <stdio.h>

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
  static char ring[4][2048];
  static int  k;
  char       *b = ring[k++ % 4];
  size_t      o = 0;
  b[o++]        = '"';
  for (; *s && o < sizeof ring[0] - 8; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') b[o++] = '\\', b[o++] = (char)ch;
    else if (ch < 0x20 || ch == 0x7f) o += (size_t)snprintf(b + o, 8, "\\x%02x", ch);
    else b[o++] = (char)ch;
  }
  b[o++] = '"', b[o] = 0;
  return b;
}
