#!/usr/bin/env python3
"""tests/docs_reliability.py MINIAPP DOC: the figures docs/reliability.md
quotes from the app's messages are what the app prints now (reproducible
build).

  - the verdict table: `-ksp_atol 1e3` on heat 37 x 29, 4 steps: "true
    relative residual X"; `-inject site=gradient,epoch=99,bit=3` in a run of
    6 steps: "at most 24 epochs (6 steps x -train_epochs 4)";
  - the bad-checkpoint table: the checksum of a file cut in half and of one
    with a byte changed covers the whole file (the page's "N the bytes it
    holds"; the size itself depends on the build's revision string).
A few seconds. Exit 1 naming each figure the page no longer matches."""
import os
import re
import subprocess
import sys
import tempfile


def message(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    app, docpath = os.path.abspath(sys.argv[1]), sys.argv[2]
    doc = open(docpath).read()
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        rc, out = message([app, "-scenario", "heat", "-da_grid_x", "37", "-da_grid_y", "29", "-ts_max_steps", "4", "-ksp_atol", "1e3"], tmp)
        m = re.search(r"true relative residual (\S+), bound", out)
        if rc != 2 or not m:
            errors.append("-ksp_atol 1e3: exit %d, no residual in: %s" % (rc, out.strip()[-300:]))
        elif "true relative residual %s, bound" % m.group(1) not in doc:
            errors.append("-ksp_atol 1e3: the run says 'true relative residual %s', the page does not" % m.group(1))
        g = ["-scenario", "grayscott", "-da_grid_x", "16", "-da_grid_y", "12", "-coupling", "guess"]
        rc, out = message([app] + g + ["-ts_max_steps", "6", "-inject", "site=gradient,epoch=99,bit=3"], tmp)
        m = re.search(r"the run trains at most \d+ epochs \([^)]*\)", out)
        if not m or ("`-inject: epoch=99, but %s`" % m.group(0)) not in doc:
            errors.append("-inject epoch=99 in 6 steps: the run says %r, not on the page" % (m.group(0) if m else out.strip()[-200:]))
        rc, out = message([app] + g + ["-ts_max_steps", "3", "-checkpoint", "good.bin"], tmp)
        good = os.path.join(tmp, "good.bin")
        if rc != 0 or not os.path.isfile(good):
            sys.exit("docs_reliability: the checkpoint run failed (exit %d): %s" % (rc, out.strip()[-300:]))
        data = open(good, "rb").read()
        open(os.path.join(tmp, "trunc.bin"), "wb").write(data[: len(data) // 2])
        flip = bytearray(data)
        flip[4000] ^= 0x5A
        open(os.path.join(tmp, "flip.bin"), "wb").write(bytes(flip))
        for name, size in (("trunc.bin", len(data) // 2), ("flip.bin", len(data))):
            rc, out = message([app] + g + ["-restart", name], tmp)
            m = re.search(r"-restart %s: corrupt or truncated \(checksum mismatch over (\d+) bytes\)" % re.escape(name), out)
            if rc != 1 or not m:
                errors.append("-restart %s: exit %d, %s" % (name, rc, out.strip()[-200:]))
            elif int(m.group(1)) != size:  # the page: the span is the whole file (its size is the build's: the revision is in it)
                errors.append("-restart %s: the checksum spans %s bytes of the file's %d; the page says all of them" % (name, m.group(1), size))
            elif ("`-restart %s: corrupt or truncated (checksum mismatch over N bytes)`, N the bytes %s holds" % (name, name)) not in doc:
                errors.append("-restart %s: the page no longer gives the message the run prints" % name)
    for e in errors:
        print("docs_reliability: " + e)
    if errors:
        sys.exit(1)
    print("docs_reliability: every checked figure is the run's")


if __name__ == "__main__":
    main()
