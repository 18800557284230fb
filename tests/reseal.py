#!/usr/bin/env python3
"""tests/reseal.py FILE...: seal each report or submission again, as if the program had written it as it now
is (its old seal line, if any, replaced). The tests use it after a deliberate edit, so that the checks behind
the seal (report_checks.py) still meet the edit; the seal is a checksum against accidents, not a signature."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from report_common import seal_line, seal_start  # noqa: E402

for p in sys.argv[1:]:
    with open(p, "rb") as f:
        raw = f.read()
    cut = seal_start(raw)
    body = raw[:cut] if cut else raw
    if not body.endswith(b"\n"):
        body += b"\n"
    with open(p, "wb") as f:
        f.write(body + seal_line(body))
