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
  printf("%s: %d failed checks\n", nfail ? "FAIL" : "PASS", nfail);
  return nfail != 0;
}
