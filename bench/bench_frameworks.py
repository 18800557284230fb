"""bench/bench_frameworks.py: our CPU train step against what a user would pick
instead: JAX `jit` and PyTorch eager, on the same MLP (5-32-32-1 by default,
leaky ReLU 2^-6, MSE loss, AdamW), the same batch (512x512 samples of the
explicit heat step), the same cores, in one run. Prints ms per train step,
GFLOP/s, the share of the float peak without FMA measured by bench_surrogate
in the same run, and the ratios to the frameworks with their targets.

Each framework runs in its own process pinned to the first --threads CPUs;
the rounds are interleaved (ours, JAX, PyTorch, ours, ...) and each keeps its
best round, so a slow phase of a shared machine does not land on one of them.
A framework that is not installed is reported as missing, not guessed at;
bench/bench_frameworks.sh installs JAX and PyTorch from PyPI into
build/pyenv and runs this script with it.

Usage: python3 bench/bench_frameworks.py [--build build/deterministic]
       [--threads N] [--n 262144] [--steps 5] [--rounds 3] [--layers 32,32]
"""
import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def flops_per_sample(widths):
    """2 flops per weight for the forward product, the back-data product (not
    for the first layer) and the weight gradient: the count bench_surrogate uses."""
    dims = [5] + widths + [1]
    return sum((6 if l > 0 else 4) * dims[l] * dims[l + 1] for l in range(len(dims) - 1))


def heat_data(np, n, r=0.2, seed=7):
    """One explicit heat step on random 5-point stencils, normalized with the
    batch statistics (the C surrogate normalizes with its first batch's)."""
    g = np.random.default_rng(seed)
    u = g.random((n, 5), dtype=np.float32)
    lap = (u[:, 1] + u[:, 2]) + (u[:, 3] + u[:, 4]) - 4.0 * u[:, 0]
    t = (u[:, 0] + r * lap)[:, None]
    u = (u - u.mean(0)) / u.std(0)
    t = (t - t.mean(0)) / t.std(0)
    return u.astype(np.float32), t.astype(np.float32)


def child_jax(args):
    import jax
    import jax.numpy as jnp
    import numpy as np

    x, t = heat_data(np, args.n)
    dims = [5] + args.widths + [1]
    key = jax.random.PRNGKey(42)
    params = []
    for l in range(len(dims) - 1):
        key, k1 = jax.random.split(key)
        lim = (6.0 / (dims[l] + dims[l + 1])) ** 0.5
        params.append((jax.random.uniform(k1, (dims[l], dims[l + 1]), jnp.float32, -lim, lim), jnp.zeros((dims[l + 1],), jnp.float32)))

    def net(p, x):
        for W, b in p[:-1]:
            x = jax.nn.leaky_relu(x @ W + b, 2.0**-6)
        W, b = p[-1]
        return x @ W + b

    def loss(p, x, t):
        return jnp.mean((net(p, x) - t) ** 2)

    lr, b1, b2, eps, wd = 1e-3, 0.9, 0.999, 1e-8, 0.0

    @jax.jit
    def step(p, m, v, k, x, t):
        lval, g = jax.value_and_grad(loss)(p, x, t)
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        c1, c2 = 1 - b1**k, 1 - b2**k
        p = jax.tree_util.tree_map(lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + wd * p), p, m, v)
        return p, m, v, lval

    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    x, t = jnp.asarray(x), jnp.asarray(t)
    p, m, v, l = step(params, m, v, 1.0, x, t)  # compile + warm-up
    l.block_until_ready()
    t0 = time.perf_counter()
    for k in range(args.steps):
        p, m, v, l = step(p, m, v, float(k + 2), x, t)
    l.block_until_ready()
    dt = (time.perf_counter() - t0) / args.steps
    print("RESULT jax %s %.6f" % (jax.__version__, dt))


def child_torch(args):
    """PyTorch eager: the model and timed loop of bench_surrogate_torch.py, on the CPU."""
    import torch

    sys.path.insert(0, HERE)
    import bench_surrogate_torch as bt

    torch.set_num_threads(args.threads)
    dev = torch.device("cpu")
    x, t = bt.heat_data(args.n, 0.2, dev)
    train, _ = bt.run(False, args, dev, x, t)
    print("RESULT torch %s %.6f" % (torch.__version__, train))


def run_child(kind, args):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(args.threads)
    env["OPENBLAS_NUM_THREADS"] = "1"
    if kind == "ours":
        cmd = [os.path.join(args.build, "bench", "bench_surrogate"), "-surrogate_device", "cpu", "-surrogate_layers", ",".join(map(str, args.widths)),
               "-bench_n", str(args.n), "-bench_steps", str(args.steps), "-bench_reps", "1"]
    else:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, "--n", str(args.n), "--steps", str(args.steps), "--threads", str(args.threads),
               "--layers", ",".join(map(str, args.widths))]
    cpus = sorted(os.sched_getaffinity(0))[: args.threads]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    out = p.stdout + p.stderr
    if kind == "ours":
        if p.returncode != 0:
            sys.exit("bench_frameworks: %s failed:\n%s" % (cmd[0], out[-2000:]))
        res = {}
        for st in ("atomic", "deterministic", "reproducible"):
            mt = re.search(r"^%s\s+([0-9.]+)" % st, out, re.M)
            res[st] = float(mt.group(1)) * 1e-3
        mt = re.search(r"float peak without FMA, measured: ([0-9.]+) GFLOP/s", out)
        res["peak"] = float(mt.group(1)) if mt else float("nan")
        return res
    mt = re.search(r"^RESULT (\S+) (\S+) (\S+)", out, re.M)
    if not mt:
        last = out.strip().splitlines()[-1] if out.strip() else "no output"
        return {"missing": last}
    return {"version": mt.group(2), "time": float(mt.group(3))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build/deterministic", help="build tree with bench/bench_surrogate")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--n", type=int, default=512 * 512)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--layers", default="32,32")
    ap.add_argument("--child", choices=["jax", "torch"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.widths = [int(w) for w in args.layers.split(",")]
    if args.child == "jax":
        return child_jax(args)
    if args.child == "torch":
        return child_torch(args)
    if args.threads < 1 or args.n < 1 or args.steps < 1 or args.rounds < 1:
        sys.exit("bench_frameworks: --threads, --n, --steps and --rounds must be positive")
    exe = os.path.join(args.build, "bench", "bench_surrogate")
    if not os.access(exe, os.X_OK):
        sys.exit("bench_frameworks: %s not found (build first: scripts/setup.sh deterministic)" % exe)

    best = {}
    info = {}
    for _ in range(args.rounds):
        ours = run_child("ours", args)
        for k in ("atomic", "deterministic", "reproducible"):
            best[k] = min(best.get(k, 1e30), ours[k])
        best["peak"] = max(best.get("peak", 0.0), ours["peak"])
        for kind in ("jax", "torch"):
            r = run_child(kind, args)
            if "missing" in r:
                info[kind] = "not available (%s)" % r["missing"]
            else:
                info[kind] = r["version"]
                best[kind] = min(best.get(kind, 1e30), r["time"])

    gflop = flops_per_sample(args.widths) * args.n * 1e-9
    peak = best["peak"]
    print("bench_frameworks: MLP 5-%s-1, batch %d, %d thread(s), best of %d rounds x %d steps; float peak without FMA %.1f GFLOP/s (measured); %.3g GFLOP per step"
          % ("-".join(map(str, args.widths)), args.n, args.threads, args.rounds, args.steps, peak, gflop))
    print("%-26s %10s %9s %7s" % ("train step", "ms", "GFLOP/s", "%peak"))
    rows = [("ours atomic", "atomic"), ("ours deterministic", "deterministic"), ("ours reproducible", "reproducible"),
            ("JAX jit " + info.get("jax", ""), "jax"), ("PyTorch eager " + info.get("torch", ""), "torch")]
    for label, k in rows:
        if k in best:
            print("%-26s %10.2f %9.1f %6.0f%%" % (label[:26], 1e3 * best[k], gflop / best[k], 100 * gflop / best[k] / peak))
        else:
            print("%-26s %s" % (label.split(" not")[0][:26], info.get(k, "not run")))
    det = best["deterministic"]
    print("ratios (with their targets):")
    if "jax" in best:
        print("  deterministic / JAX jit       %.3f   (target <= 1)" % (det / best["jax"]))
    if "torch" in best:
        print("  PyTorch eager / deterministic %.3f   (target >= 1.5)" % (best["torch"] / det))
    print("  reproducible / atomic         %.3f   (target <= 1.5)" % (best["reproducible"] / best["atomic"]))


if __name__ == "__main__":
    main()
