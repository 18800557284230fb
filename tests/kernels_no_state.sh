#!/usr/bin/env bash
# kernels_no_state: kernels/ keeps no writable state. Anything that changes a
# result (the seeded atomic order, the fault hooks) is a context its owner
# passes down, so objects can never share one by accident. The symbol table
# of the kernels library (objdump -t) must show no object in a writable
# section (.data, .bss, thread-local, common) except:
#   isa_now                      the cached vector-path choice (rsum_isa), the one
#                                process-wide setting, made once and never changing bits
#   .gomp_critical_user_*        the locks OpenMP creates for named critical sections
# Constant tables of pointers sit in .data.rel.ro (read-only once relocated): allowed.
# usage: kernels_no_state.sh LIBRARY.a
set -euo pipefail
lib=$1
[ -f "$lib" ] || { echo "kernels_no_state: no library at $lib" >&2; exit 1; }
command -v objdump > /dev/null || { echo "kernels_no_state: objdump not found" >&2; exit 1; }
table=$(objdump -t "$lib")
# object symbols: "ADDR FLAGS O SECTION SIZE NAME"; the section is the field before the size
objs=$(awk '$0 ~ / O / { for (i = 1; i <= NF; i++) if ($i == "O") { print $(i + 1), $NF; break } }' <<< "$table")
[ -n "$objs" ] || { echo "kernels_no_state: no object symbols in $lib (is it the kernels library?)" >&2; exit 1; }
bad=$(awk '$1 ~ /^(\.data|\.bss|\.tdata|\.tbss|\*COM\*)/ && $1 !~ /^\.data\.rel\.ro/ && $2 != "isa_now" && $2 !~ /^\.gomp_critical_user_/' <<< "$objs")
grep -q ' isa_now$' <<< "$objs" || { echo "kernels_no_state: isa_now not found: the allowed ISA choice moved or was renamed; update this test" >&2; exit 1; }
if [ -n "$bad" ]; then
  echo "kernels_no_state: writable data in $lib (section, symbol):" >&2
  sed 's/^/  /' <<< "$bad" >&2
  exit 1
fi
echo "kernels_no_state: $(wc -l <<< "$objs") object symbols, the only writable ones isa_now and OpenMP's critical-section locks"
