#!/bin/bash
# bench/bench_frameworks.sh: install JAX (CPU) and PyTorch from PyPI into
# build/pyenv (once; about 6 GB with PyTorch's CUDA libraries, which stay
# unused here), then run bench/bench_frameworks.py with it. Arguments are
# passed on, e.g.  bench/bench_frameworks.sh --build build/deterministic --rounds 3
# Needs a built tree (scripts/setup.sh deterministic). Not a test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$root/build/pyenv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || { echo "bench_frameworks: python3 -m venv failed (apt-get install python3-venv)" >&2; exit 1; }
fi
for pkg in "jax[cpu]" torch; do
  mod=${pkg%%[*}
  "$venv/bin/python" -c "import $mod" 2> /dev/null || "$venv/bin/pip" install -q "$pkg" ||
    echo "bench_frameworks: could not install $pkg from PyPI; it will be reported as missing" >&2
done
cd "$root"
exec "$venv/bin/python" bench/bench_frameworks.py "$@"
