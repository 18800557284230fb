/* kernels/optrange.c: the range check and refusal line of a numeric option (optrange.h). */
#include "optrange.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shortest text that reads back as v (0.99999999 stays itself, not "1");
 * a bound's exponent as written on a command line (1e6, 1e-100), a value's
 * as PETSc prints it (1e+09). */
static void Number(char *buf, size_t len, double v, unsigned flags, int bound)
{
  char *e;
  if ((flags & OPT_INT) && isfinite(v)) {
    snprintf(buf, len, "%lld", (long long)v);
    return;
  }
  for (int digits = 6; digits <= 17; digits++) {
    snprintf(buf, len, "%.*g", digits, v);
    if (!isfinite(v) || strtod(buf, NULL) == v) break;
  }
  if (bound && (e = strchr(buf, 'e'))) {
    char *d = e + 1 + (e[1] == '-'), *s = e + 1 + (e[1] == '-' || e[1] == '+');
    while (*s == '0' && s[1]) s++;
    memmove(d, s, strlen(s) + 1);
  }
}

static int Outside(const opt_range *r)
{
  double v = r->value;
  if (isnan(v) || ((r->flags & OPT_FINITE) && isinf(v))) return 1;
  if ((r->flags & OPT_NORMAL) && v != 0 && !isnormal(v)) return 1;
  if ((r->flags & OPT_LO_OPEN) ? !(v > r->lo) : !(v >= r->lo)) return 1;
  return (r->flags & OPT_HI_OPEN) ? !(v < r->hi) : !(v <= r->hi);
}

int opt_range_refuse(const opt_range *r, char *msg, size_t len)
{
  char v[32], lo[32], hi[32], range[96];
  int  haslo = r->lo > -OPT_NONE, hashi = r->hi < OPT_NONE;

  if (!Outside(r)) return 0;
  Number(v, sizeof v, r->value, r->flags, 0);
  Number(lo, sizeof lo, r->lo, r->flags, 1);
  Number(hi, sizeof hi, r->hi, r->flags, 1);
  if (haslo && hashi)
    snprintf(range, sizeof range, "must be in %c%s, %s%c", r->flags & OPT_LO_OPEN ? '(' : '[', lo, hi,
             r->flags & OPT_HI_OPEN ? ')' : ']');
  else if (haslo && r->lo == 0 && (r->flags & OPT_LO_OPEN))
    snprintf(range, sizeof range, "must be %s", r->flags & OPT_FINITE ? "a positive number" : "positive");
  else if (haslo && r->lo == 0) snprintf(range, sizeof range, "must not be negative");
  else if (haslo) snprintf(range, sizeof range, "must be %s %s", r->flags & OPT_LO_OPEN ? "above" : "at least", lo);
  else if (hashi) snprintf(range, sizeof range, "must be %s %s", r->flags & OPT_HI_OPEN ? "below" : "at most", hi);
  else snprintf(range, sizeof range, "must be a finite number");
  snprintf(msg, len, "%s %s: %s%s%s%s", r->name, v, range, r->why ? " (" : "", r->why ? r->why : "",
           r->why ? ")" : "");
  return 1;
}

int opt_ranges_refuse(const opt_range *r, size_t n, char *msg, size_t len)
{
  for (size_t k = 0; k < n; k++)
    if (opt_range_refuse(&r[k], msg, len)) return 1;
  return 0;
}

const char *opt_say(char *msg, size_t len, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, len, fmt, ap);
  va_end(ap);
  return msg;
}
