/* tests/output/test_yamlfmt.c: the YAML scalars of the summary and report:
 * NaN and infinities as .nan/.inf/-.inf (printf's nan/inf would read back as
 * strings), strings quoted with '"', '\' and control characters escaped, and
 * several results alive at once (the ring). */
#include "yamlfmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int nfail;
#define CHECK_EQ(got, want) do { const char *g_ = (got); if (strcmp(g_, (want))) { nfail++; printf("FAIL line %d: got [%s], want [%s]\n", __LINE__, g_, (want)); } } while (0)

int main(void)
{
  CHECK_EQ(yaml_num("%.6e", NAN), ".nan");
  CHECK_EQ(yaml_num("%.6e", INFINITY), ".inf");
  CHECK_EQ(yaml_num("%.6e", -INFINITY), "-.inf");
  CHECK_EQ(yaml_num("%.6e", 1.5e-3), "1.500000e-03");
  CHECK_EQ(yaml_num("%.3f", -0.0), "-0.000");
  const char *a = yaml_num("%.1f", 1.0), *b = yaml_num("%.1f", 2.0); /* both alive in one printf */
  CHECK_EQ(a, "1.0");
  CHECK_EQ(b, "2.0");
  CHECK_EQ(yaml_str("plain"), "\"plain\"");
  CHECK_EQ(yaml_str("say \"hi\" \\ there"), "\"say \\\"hi\\\" \\\\ there\"");
  CHECK_EQ(yaml_str("tab\there\nnl"), "\"tab\\x09here\\x0anl\"");
  CHECK_EQ(yaml_str(""), "\"\"");
  { /* a string is written whole however long (a report's petsc_configure, a long path) */
    enum { N = 5000 };
    static char in[N + 1], want[4 * N + 3];
    size_t      o = 0;
    want[o++] = '"';
    for (int i = 0; i < N; i++) {
      in[i] = i % 97 == 0 ? '"' : i % 89 == 0 ? '\n' : (char)('a' + i % 26);
      if (in[i] == '"') want[o++] = '\\', want[o++] = '"';
      else if (in[i] == '\n') memcpy(want + o, "\\x0a", 4), o += 4;
      else want[o++] = in[i];
    }
    want[o++] = '"', want[o] = 0;
    const char *x = yaml_str(in), *y = yaml_str("short"); /* the long one stays alive beside another */
    CHECK_EQ(x, want);
    CHECK_EQ(y, "\"short\"");
  }
  printf("%s: %d failed checks\n", nfail ? "FAIL" : "PASS", nfail);
  return nfail != 0;
}
