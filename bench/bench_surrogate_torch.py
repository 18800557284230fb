"""bench/bench_surrogate_torch.py: the PyTorch reference for bench_surrogate.c.

Same MLP (5-32-32-1 by default, leaky ReLU 2^-6, MSE, AdamW), same data (one
explicit heat step on random 5-point stencils) and batch (512x512 samples),
trained in PyTorch's default (eager) mode, with
torch.use_deterministic_algorithms(True), and compiled with torch.compile
(where it works: it needs a C compiler and, on CUDA, Triton), in the same run;
prints samples/s and the ratios to the default mode. Runs on CUDA when available, else on the CPU.
Each time is the median of --reps runs of --steps calls after --warmup calls
(torch.compile compiles there); on CUDA also with the batch copied from
page-locked host memory every call, as the coupled loop and bench_surrogate do.
Usage: python3 bench/bench_surrogate_torch.py [--n 262144] [--steps 20] [--reps 5] [--warmup 3] [--layers 32,32] [--modes default,deterministic,compile]
(on CUDA set CUBLAS_WORKSPACE_CONFIG=:4096:8 for the deterministic mode; the
script sets it when unset). The data are drawn with torch's generator, not the
project's counter-based RNG: the same map and distribution, not the same bits.
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402


def heat_data(n, r, device, seed=7):
    g = torch.Generator().manual_seed(seed)
    u = torch.rand(n, 5, generator=g)
    lap = (u[:, 1] + u[:, 2]) + (u[:, 3] + u[:, 4]) - 4.0 * u[:, 0]
    t = (u[:, 0] + r * lap).unsqueeze(1)
    # normalization from the batch, as the C surrogate does on its first batch
    u = (u - u.mean(0)) / u.std(0, unbiased=False)
    t = (t - t.mean(0)) / t.std(0, unbiased=False)
    return u.to(device), t.to(device)


def model(widths, device):
    dims = [5] + widths + [1]
    layers = []
    for i in range(len(dims) - 1):
        layers.append(torch.nn.Linear(dims[i], dims[i + 1]))
        if i + 2 < len(dims):
            layers.append(torch.nn.LeakyReLU(2.0**-6))
    torch.manual_seed(42)
    return torch.nn.Sequential(*layers).to(device)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def frames_compiled():
    """Frames torch.compile has compiled so far (recompiles included), or None."""
    try:
        from torch._dynamo.utils import counters
        return int(counters["frames"]["ok"])
    except Exception:
        return None


def median_time(fn, device, steps, reps):
    """Median over reps of the time per call of steps calls of fn, in seconds."""
    times = []
    for _ in range(reps):
        sync(device)
        t0 = time.perf_counter()
        for _ in range(steps):
            fn()
        sync(device)
        times.append((time.perf_counter() - t0) / steps)
    return statistics.median(times)


def run(mode, args, device, x, t, xh, th):
    """Train-step and inference times of one mode: (train, infer, train with
    the batch copied from host memory, infer likewise, frames compiled while
    timed). The host-batch times copy the batch (and the predictions back)
    every call, as the coupled loop does with its page-locked batch."""
    torch.use_deterministic_algorithms(mode == "deterministic")
    net = model(args.widths, device)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    if mode == "compile":
        net = torch.compile(net)
    lossf = torch.nn.MSELoss()

    def step(xb=x, tb=t):
        opt.zero_grad(set_to_none=True)
        loss = lossf(net(xb), tb)
        loss.backward()
        opt.step()
        return loss

    def step_host():
        return step(xh.to(device, non_blocking=True), th.to(device, non_blocking=True))

    def infer():
        with torch.no_grad():
            return net(x)

    oh = torch.empty((args.n, 1), pin_memory=True) if xh is not None else None

    def infer_host():
        with torch.no_grad():
            return oh.copy_(net(xh.to(device, non_blocking=True)))

    fns = (step, infer, step_host, infer_host) if xh is not None else (step, infer)
    for _ in range(args.warmup):  # torch.compile compiles here (train and no-grad graphs)
        for f in fns:
            f()
    before = frames_compiled()
    if mode == "compile" and not before:  # compiled frames must be counted by now: else the counter is not what we read
        before = None
    res = [median_time(f, device, args.steps, args.reps) for f in fns]
    after = frames_compiled()
    torch.use_deterministic_algorithms(False)
    if xh is None:
        res += [None, None]
    res.append(None if before is None or after is None else after - before)
    return res


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=512 * 512)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--layers", default="32,32")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--modes", default="default,deterministic,compile")
    args = p.parse_args()
    try:
        args.widths = [int(w) for w in args.layers.split(",")]
    except ValueError:
        p.error("--layers %s: comma-separated positive integers expected" % args.layers)
    modes = args.modes.split(",")
    if args.n < 1 or args.steps < 1 or args.reps < 1 or args.warmup < 1 or any(w < 1 for w in args.widths):
        p.error("--n, --steps, --reps, --warmup and every --layers width must be at least 1")
    if "default" not in modes or any(m not in ("default", "deterministic", "compile") for m in modes):
        p.error("--modes %s: a comma list of default, deterministic, compile that includes default" % args.modes)
    device = torch.device(args.device)
    x, t = heat_data(args.n, 0.2, device)
    xh = th = None
    if device.type == "cuda":  # the batch in page-locked host memory too, as the coupled loop keeps it
        xh, th = x.cpu().pin_memory(), t.cpu().pin_memory()
    res, failed = {}, {}
    for name in modes:
        try:
            res[name] = run(name, args, device, x, t, xh, th)
        except Exception as e:  # torch.compile can fail for want of a compiler or Triton
            if name != "compile":
                raise
            torch.use_deterministic_algorithms(False)
            failed[name] = str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__
    dev = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu (%d threads)" % torch.get_num_threads()
    print("bench_surrogate_torch: torch %s, device %s, batch %d, MLP 5-%s-1, median of %d x %d steps after %d warm-up" % (torch.__version__, dev, args.n, args.layers.replace(",", "-"), args.reps, args.steps, args.warmup))
    print("%-14s %12s %14s %10s %14s %13s %14s %9s" % ("mode", "step ms", "train samp/s", "vs default", "infer samp/s", "host step ms", "host infer/s", "compiles"))
    for name, (tt, tp, th_, tph, nc) in res.items():
        host = ("%13.3f %14.4g" % (1e3 * th_, args.n / tph)) if th_ is not None else "%13s %14s" % ("-", "-")
        print("%-14s %12.3f %14.4g %10.3f %14.4g %s %9s" % (name, 1e3 * tt, args.n / tt, tt / res["default"][0], args.n / tp, host, "-" if nc is None else nc))
    print("host: the batch copied from page-locked host memory every call (and the predictions back), as the coupled loop does; compiles: frames torch.compile compiled while timed (0: steady state)")
    for name, why in failed.items():
        print("%-14s unavailable: %s" % (name, why))


if __name__ == "__main__":
    main()
