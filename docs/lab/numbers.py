"""docs/lab/numbers.py: the manifest of the numbers the lab (README.md) and
its answers (answers.md) quote, read by scripts/labnumbers.py and checked by
ctest `lab_numbers`. Each Q() names the doc, its section (a heading prefix),
the quoted text with every held number written as {}, the value(s) from a
run and the printed format. A {} matches any number; its context must occur
exactly once in the section. Every decimal number or percentage of the
prose must be held here or listed in UNHELD with the reason.

Tolerance: EXACT (the printed text must equal the run's value printed the
same way) for everything the miniapp prints: seeded atomic orders and the
ordered builds give the same bits on any thread count, and on the CPUs this
project runs on (their only BLAS call in a run is dscal, exact in any
kernel; forcing OpenBLAS's Prescott kernels and glibc's non-FMA libm left
every state and weights hash as it was, 2026-11-25). The exception is the
sum study's *normal* data: Box-Muller draws them with glibc's log, whose
FMA and non-FMA variants (chosen at run time by the CPU) differ in the last
bit, and a maximum over 100 arrays moves with that: those numbers are held
within a relative tolerance (REL).
"""
from labnumbers import Job, Q, Derived, f, e, g, pct, i, s, low
import math

README, ANSWERS = "README.md", "answers.md"
DOCS = (README, ANSWERS)
REL = 0.02  # the sum study's normal data (glibc's log variant, above)

# ---- runs: the lab's sections (their ```sh lines; figures, the sweep and
# display-only lines left out) and the few commands a question asks for ----
bg = Job("chaos-full", section="Setup", full_only=True, expect=300)
ex1 = Job("ex1", section="Exercise 1", expect=5)
ex2 = Job("ex2", section="Exercise 2", expect=150)
ex3 = Job("ex3", section="Exercise 3", expect=30)
ex5 = Job("ex5", section="Exercise 5", expect=30)
ex6 = Job("ex6", section="Exercise 6", expect=20)
ex7 = Job("ex7", section="Exercise 7", expect=80)
F6 = ("build/atomic/miniapp/miniapp -options_file inputs/default.opts -guess_learn increment -coupling_baselines false -replicas 3 "
      "-atomic_order_seed 1 -inject site=operator,step=20,bit={bit},replica=1 {extra} > /dev/null || [ $? = 2 ]")
ex6b40 = Job("ex6-bit40", cmd=F6.format(bit=40, extra="-ts_max_steps 100 -output out/lab/fault-atomic-bit40.nc -summary out/lab/fault-atomic-bit40.yaml"), expect=5)
ex6q3 = Job("ex6-q3", cmd=F6.format(bit=39, extra="-ts_max_steps 22 -fault_checks -output none -summary out/lab/q3-bit39.yaml"), expect=2)
ex6q3b = Job("ex6-q3-bit38", cmd=F6.format(bit=38, extra="-ts_max_steps 22 -fault_checks -output none -summary out/lab/q3-bit38.yaml"), expect=2)
# docs/metrics.md's no-coupling control, 9000 steps (the wrap-up quotes it)
none9000 = Job("chaos-none-9000", full_only=True, expect=200, cmd=(
    "build/atomic/miniapp/miniapp -scenario grayscott -gs_F 0.018 -gs_k 0.055 -da_grid_x 64 -da_grid_y 64 "
    "-ts_max_steps 9000 -replicas 2 -atomic_order_seed 1 -output_every 250 -threads 1 -coupling none "
    "-output out/lab/chaos-none-9000.nc -summary out/lab/chaos-none-9000.yaml > /dev/null"))
# the chaos deck with another seed, 9000 steps (the wrap-up quotes its growth: the seed spread)
seed2 = Job("chaos-seed2", full_only=True, expect=300, cmd=(
    "build/atomic/miniapp/miniapp -options_file inputs/chaos.opts -atomic_order_seed 2 -threads 1 "
    "-output out/lab/chaos-seed2.nc -summary out/lab/chaos-seed2.yaml > /dev/null"))
JOBS = [bg, ex1, ex2, ex3, ex5, ex6, ex6b40, ex6q3, ex6q3b, ex7, none9000, seed2]


# ---- readers ---------------------------------------------------------------
def fit(dist, key, method="element"):
    return ex1.yaml("out/lab/sums.yaml", "fits", method, dist, key)


def blocks(method, dist, n, col):
    return ex1.csv("out/lab/blocks.csv", col, method=method, dist=dist, n=n)


A2 = "out/lab/chaos-atomic.nc"


def chaos(var, step, replica=1):
    return ex2.nc(A2, var, step=step, replica=replica)


def full(var, step):  # the background run; steps <= 1000 also from exercise 2's run (same bits)
    v = bg.nc("out/lab/chaos-full.nc", var, step=step, replica=1)
    return v.or_short(ex2, A2) if step <= 1000 else v


def first_step(job, path, cond, desc, var="rel_l2"):
    return Derived(desc, lambda st, x: int(st[next(k for k in range(len(x)) if cond(x[k]))]),
                   job.nc(path, "step"), job.nc(path, var, replica=1))


def mag(v):  # an order of magnitude, as "1e-17"
    return f"1e{round(math.log10(abs(v)))}"


def floor1(v):
    return f"{math.floor(v * 10) / 10:.1f}"


T3 = "out/lab/train.nc"


def weights(epoch, r):
    return ex3.nc(T3, "weights_rel_l2", epoch=epoch, replica=r)


def loss(epoch, r):
    return ex3.nc(T3, "loss", epoch=epoch, replica=r)


def loss_vs(epoch, r):
    return Derived(f"V_s of replica {r}'s loss at epoch {epoch}", lambda a, b: 1 - abs(b / a), loss(epoch, 0), loss(epoch, r))


def last_epoch_of_step(step):
    return Derived(f"the last epoch of step {step}", lambda es, ep: int(max(ep[k] for k in range(len(ep)) if es[k] == step)),
                   ex3.nc(T3, "epoch_step"), ex3.nc(T3, "epoch"))


def at40(var, r):  # exercise 3's run at step 40
    return ex3.nc(T3, var, step=40, replica=r)


def loss_vs40(r):
    return Derived(f"V_s of replica {r}'s loss at the last epoch of step 40",
                   lambda es, l0, lr: 1 - abs(lr[max(k for k in range(len(es)) if es[k] == 40)] /
                                              l0[max(k for k in range(len(es)) if es[k] == 40)]),
                   ex3.nc(T3, "epoch_step"), ex3.nc(T3, "loss", replica=0), ex3.nc(T3, "loss", replica=r))


def weights40(r):
    return Derived(f"replica {r}'s weights_rel_l2 at the last epoch of step 40",
                   lambda es, w: w[max(k for k in range(len(es)) if es[k] == 40)],
                   ex3.nc(T3, "epoch_step"), ex3.nc(T3, "weights_rel_l2", replica=r))


def loss_vs_max(upto=None):
    def fn(l0, l1, l2):
        vs = [max(abs(1 - abs(l1[k] / l0[k])), abs(1 - abs(l2[k] / l0[k]))) for k in range(len(l0))]
        return vs if upto is None else vs[upto]
    return Derived("max |V_s| of the losses", fn, *(ex3.nc(T3, "loss", replica=r) for r in (0, 1, 2)))


TOLS = ("1e-4", "1e-6", "1e-8", "1e-10")


def tol(kind, t, key, *idx):
    return ex5.yaml(f"out/lab/tol-{kind}-{t}.yaml", key, *idx)


def tol_nc(kind, t, var, step=None, replica=1):
    kw = {"step": step} if step is not None else {}
    return ex5.nc(f"out/lab/tol-{kind}-{t}.nc", var, replica=replica, **kw)


def same_or_all(fmt):
    return lambda *v: fmt(v[0]) if len({fmt(x) for x in v}) == 1 else "/".join(fmt(x) for x in v)


def fault(path, var, step, replica=1, job=None):
    return (job or ex6).nc(f"out/lab/{path}.nc", var, step=step, replica=replica)


def fault_yaml(path, key, job=None):
    return (job or ex6).yaml(f"out/lab/{path}.yaml", "fault", key)


def rel_change(path, job=None):
    return Derived("|new - old| / |old| of the flipped value", lambda o, n: abs(n - o) / abs(o),
                   fault_yaml(path, "old_value", job), fault_yaml(path, "new_value", job))


def c7(name, var, step=1000):
    return ex7.nc(f"out/lab/chaos-{name}.nc", var, step=step, replica=1)


def its(job, path):
    return job.yaml(path, "ksp_iterations_total")


R2, A2Y, T3Y = ex2, "out/lab/chaos-atomic.yaml", "out/lab/train.yaml"
f0, f1, f2, f3, e1, e2 = f(0), f(1), f(2), f(3), e(1), e(2)
ORDERED_DIGITS = Derived("the fewest digits of replica 1 at any step, deterministic and reproducible",
                         lambda a, b: min(min(a), min(b)), ex2.nc("out/lab/chaos-deterministic.nc", "digits"),
                         ex2.nc("out/lab/chaos-reproducible.nc", "digits"))
ORDERED_FDS = Derived("replica 1's first divergent step, deterministic and reproducible", lambda a, b: a if a == b else f"{a}/{b}",
                      R2.yaml("out/lab/chaos-deterministic.yaml", "replica_first_divergent_step", 1),
                      R2.yaml("out/lab/chaos-reproducible.yaml", "replica_first_divergent_step", 1))
VC1_STEP = first_step(ex2, A2, lambda x: x >= 1.0, "the first step with V_c = 1", var="vc")
JUMP = [first_step(ex2, A2, lambda x: x > 1e-13, "the first step with rel_l2 > 1e-13"),
        first_step(ex7, "out/lab/chaos-rtol12.nc", lambda x: x > 1e-13, "the first step with rel_l2 > 1e-13")]
RATIO12 = Derived("the step-1000 rel_l2 at rtol 1e-10 over that at 1e-12", lambda a, b: round(a / b), chaos("rel_l2", 1000), c7("rtol12", "rel_l2"))
DECADES_NONE = Derived("log10 of the step-1000 rel_l2, guess over none", lambda a, b: math.log10(a / b), chaos("rel_l2", 1000), c7("none", "rel_l2"))
CHURN40 = Derived("the largest churn at step 40", lambda *c: max(c), *(at40(k, r) for k in ("churn_10", "churn_50", "churn") for r in (1, 2)))
LOSS_1E4 = Derived("the first epoch where a loss V_s exceeds 1e-4", lambda vs: next(k for k, x in enumerate(vs) if x > 1e-4), loss_vs_max())
LOSS_DIGITS100 = loss_vs_max(100).then(lambda x: -math.log10(x), "-log10 of the largest |V_s|")
EX5_ROW = lambda t: [tol("guess", t, "replica_final_digits", 1), tol("guess", t, "replica_final_weights_rel_l2", 1),
                     tol("guess", t, "ksp_iterations_total"), tol("none", t, "replica_final_digits", 1), tol("none", t, "ksp_iterations_total")]
FULL_RATE = [bg.yaml("out/lab/chaos-full.yaml", "replica_growth_decades_per_1000_steps", 1), bg.yaml("out/lab/chaos-full.yaml", "replica_efolding_steps", 1)]
FULL_WINDOW = [bg.yaml("out/lab/chaos-full.yaml", f"replica_growth_window_{k}", 1) for k in ("from", "to")]
SEED2_RATE = seed2.yaml("out/lab/chaos-seed2.yaml", "replica_growth_decades_per_1000_steps", 1)
HIT = [first_step(seed2, "out/lab/chaos-seed2.nc", lambda x: x >= 1e-2, "seed 2: the first step with rel_l2 >= 1e-2"),
       first_step(bg, "out/lab/chaos-full.nc", lambda x: x >= 1e-2, "seed 1: the first step with rel_l2 >= 1e-2")]
# exercise 2's record against the growth window's floor, the deck's rtol (docs/metrics.md)
FLOOR2 = [first_step(ex2, A2, lambda x: x >= 1e-10, "the first step with rel_l2 >= 1e-10 (the growth window's floor)"),
          Derived("decades from the floor 1e-10 to step 1000", lambda r: math.log10(r / 1e-10), chaos("rel_l2", 1000))]

NUMBERS = [
    # ---------------------------------------------------------------- README
    Q(README, "Exercise 1", "measured alpha = {} (uniform; median {}) and", [fit("uniform", "alpha"), fit("uniform", "alpha_median")], f2),
    Q(README, "Exercise 1", "and {} (normal, a noisy maximum; median {})", [fit("normal", "alpha"), fit("normal", "alpha_median")], f2, tol=REL),
    Q(README, "Exercise 1", "at 1e5, {}x below `element`", ex1.yaml("out/lab/sums.yaml", "element_over_block", "uniform"), f1),
    Q(README, "Exercise 1", "V_s = 0 for **all {} arrays** at N = 1025 and 2048",
      Derived("the fewest zeros of block at N = 1025 and 2048 (both distributions)", lambda *z: min(z),
              *[blocks("block", d, n, "zeros") for d in ("uniform", "normal") for n in (1025, 2048)]), i),
    Q(README, "Exercise 1", "(uniform data: {} zeros, max {}) nor at 2049 ({} zeros, {})",
      [blocks("block", "uniform", n, c) for n in (1000, 2049) for c in ("zeros", "max_abs_vs")], [i, e2, i, e2]),
    Q(README, "Exercise 2", "lines sit at {} (bitwise equal) at every step", ORDERED_DIGITS, f0),
    Q(README, "Exercise 2", "the atomic line leaves 17 at step {} (at step 1 the replicas already differ, by rel_l2 {},",
      [first_step(ex2, A2, lambda d: d < 17, "the first step with fewer than 17 digits", var="digits"), chaos("rel_l2", 1)], [i, e2]),
    Q(README, "Exercise 2", "falls: {} digits at step 10, {} at 100, {} at 200, {} at 500, **{} at 1000** (rel_l2 {})",
      [chaos("digits", n) for n in (10, 100, 200, 500, 1000)] + [chaos("rel_l2", 1000)], [f1] * 5 + [e2]),
    Q(README, "Exercise 2", "`replica_first_divergent_step` is {} in the atomic build (V_c {} at step 1",
      [R2.yaml(A2Y, "replica_first_divergent_step", 1), chaos("vc", 1)], [i, g(2)]),
    Q(README, "Exercise 2", "in the last bits; {} at step 10), {} in the others", [chaos("vc", 10), ORDERED_FDS], [g(2), s]),
    Q(README, "Exercise 2", "which the difference passes at step {}, and from there to step 1000 it rises by {} decades", FLOOR2, [i, f1]),
    Q(README, "Exercise 2", "shows where they differ (by up to {})", chaos("max_abs", 1000), e1),
    Q(README, "Exercise 3", "climbs steadily from {} at epoch 0: {} at epoch 10, {} at 100, {}..{} at 400, {}..{} at 800",
      [weights(0, 1), weights(10, 1), weights(100, 1), weights(400, 1), weights(400, 2), weights(800, 1), weights(800, 2)],
      [e1, e2, e1, e1, e1, e1, e1]),
    Q(README, "Exercise 3", "At the end (300 steps, {} epochs) `replica_final_weights_rel_l2` is {} and {};",
      [ex3.yaml(T3Y, "train_epochs_total")] + [ex3.yaml(T3Y, "replica_final_weights_rel_l2", r) for r in (1, 2)], [i, g(2), g(2)]),
    Q(README, "Exercise 3", "`replica_final_churn_10` {}% and {}% of the points", [ex3.yaml(T3Y, "replica_final_churn_10", r) for r in (1, 2)], pct(2)),
    Q(README, "Exercise 3", "`replica_final_churn_50` {}% and {}% by more than half, `replica_final_churn` {}% and {}% by",
      [ex3.yaml(T3Y, k, r) for k in ("replica_final_churn_50", "replica_final_churn") for r in (1, 2)], pct(2)),
    Q(README, "Exercise 3", "the final loss differs by {}% and {}% (`replica_final_loss_vs` {}, {};",
      [ex3.yaml(T3Y, "replica_final_loss_vs", r).then(abs, "|V_s|") for r in (1, 2)]
      + [ex3.yaml(T3Y, "replica_final_loss_vs", r) for r in (1, 2)], [pct(2), pct(2), g(2), g(2)]),
    Q(README, "Exercise 3", "still agree to {} and {} digits. After only 40", [ex3.yaml(T3Y, "replica_final_digits", r) for r in (1, 2)], f1),
    Q(README, "Exercise 3", "loss V_s {} and {}, weights {} and {}, churn {} at every level",
      [loss_vs40(1), loss_vs40(2), weights40(1), weights40(2), CHURN40], [e1, e1, e1, e1, g(1)]),
    Q(README, "Exercise 3", "fields {} and {} digits. (Atomic build;", [at40("digits", r) for r in (1, 2)], f1),
    Q(README, "Exercise 3", "1. Until epoch {} the three losses agree to better than 1e-4 (at epoch 100 to {} digits)",
      [LOSS_1E4, LOSS_DIGITS100], [i, f0]),
    Q(README, "Exercise 5", "agree to **{}, {}, {} and {} digits**", [tol("guess", t, "replica_final_digits", 1) for t in TOLS], f1),
    Q(README, "Exercise 5", "the solver-alone replicas to **{}** at every tolerance ({}, {}, {}, {})",
      [Derived("each none run's final digits, printed alike", same_or_all(f1), *(tol("none", t, "replica_final_digits", 1) for t in TOLS))]
      + [tol("none", t, "replica_final_digits", 1) for t in TOLS], [s] + [f2] * 4),
    Q(README, "Exercise 5", "(rel_l2 between {} and {} times rtol)",
      [Derived(f"the {n} final rel_l2 / rtol of the guess runs", lambda *r, fn=fn: fn(x / float(t) for x, t in zip(r, TOLS)),
               *(tol("guess", t, "replica_final_rel_l2", 1) for t in TOLS)) for n, fn in (("smallest", min), ("largest", max))],
      [g(1), g(2)]),
    Q(README, "Exercise 5", "iterations in 100 steps: guess {} / {} / {} / {}, none {} / {} / {} / {}",
      [tol(k, t, "ksp_iterations_total") for k in ("guess", "none") for t in TOLS], i),
    Q(README, "Exercise 5", "{} of 100 steps take 0 iterations",
      Derived("the steps without iterations (replica 0, rtol 1e-4)", lambda x: sum(1 for v in x[1:] if v == 0),
              tol_nc("guess", "1e-4", "ksp_its", replica=0)), i),
    Q(README, "Exercise 5", "falls to ~{} digits in the first 30 steps and then slowly to {}, the none line settles at {} and stays",
      [tol_nc("guess", "1e-6", "digits", step=30), tol("guess", "1e-6", "replica_final_digits", 1),
       tol("none", "1e-6", "replica_final_digits", 1)], [f0, f1, f1]),
    Q(README, "Exercise 5", "stays above {} for 20 steps and sinks to {} by step 100",
      [Derived("the fewest digits in steps 1-20 at rtol 1e-10", lambda d: min(d[1:21]), tol_nc("guess", "1e-10", "digits")),
       tol("guess", "1e-10", "replica_final_digits", 1)], [floor1, f1]),
    Q(README, "Exercise 5", "weights differ by {} .. {} (relative) at the end",
      [Derived(n, lambda *w, fn=fn: fn(w), *(tol("guess", t, "replica_final_weights_rel_l2", 1) for t in TOLS))
       for n, fn in (("the smallest final weights_rel_l2", min), ("the largest final weights_rel_l2", max))], [e1, g(1)]),
    Q(README, "Exercise 5", "2. At rtol 1e-10 the weights differ by {} (relative), at 1e-4 by {}.",
      [tol("guess", "1e-10", "replica_final_weights_rel_l2", 1), tol("guess", "1e-4", "replica_final_weights_rel_l2", 1)], [e1, g(1)]),
    Q(README, "Exercise 6", "the value changed from {} to ...{}, one ulp)",
      [ex6.text("out/lab/fault-repro-bit0.yaml", r"^  old_value: ([0-9.]+)$"),
       ex6.text("out/lab/fault-repro-bit0.yaml", r"^  new_value: [0-9.]*?([0-9]{3})$")], s),
    Q(README, "Exercise 6", "`detected_by_replicas_step: {}`, `replicas_attribute_it: {}`, {}, and the difference at step 20 is rel_l2 **{}**",
      [fault_yaml("fault-repro-bit0", "detected_by_replicas_step"), fault_yaml("fault-repro-bit0", "replicas_attribute_it"),
       ex6.yaml("out/lab/fault-repro-bit0.yaml", "verification"), fault("fault-repro-bit0", "rel_l2", 20)], [i, low, s, e2]),
    Q(README, "Exercise 6", "but `detected: {}` ({}): at step 20 the fault-free replica 2 already differs by {} from replica 0",
      [fault_yaml("fault-atomic-bit0", "detected"), ex6.yaml("out/lab/fault-atomic-bit0.yaml", "verification"),
       fault("fault-atomic-bit0", "rel_l2", 20, replica=2)], [low, s, e2]),
    Q(README, "Exercise 6", "changed by {} relative): `detected_above_noise_step: {}` (rel_l2 {} against the noise {})",
      [rel_change("fault-atomic-bit39"), fault_yaml("fault-atomic-bit39", "detected_above_noise_step"),
       fault("fault-atomic-bit39", "rel_l2", 20), fault("fault-atomic-bit39", "rel_l2", 20, replica=2)], [e2, i, e2, e2]),
    Q(README, "Exercise 6", "stays at {} at step 20 ({} is below the 17-digit cap), falls to ~{} at step 21 and then drifts down ({} at step 100)",
      [fault("fault-repro-bit0", "digits", 20), fault("fault-repro-bit0", "rel_l2", 20), fault("fault-repro-bit0", "digits", 21),
       fault("fault-repro-bit0", "digits", 100)], [f0, e2, f0, f1]),
    Q(README, "Exercise 6", "drops to ~{} at step 20 and then *recovers* ({} at step 100, rel_l2 {}) while the fault-free replica's noise grows to {}:",
      [fault("fault-atomic-bit39", "digits", 20), fault("fault-atomic-bit39", "digits", 100), fault("fault-atomic-bit39", "rel_l2", 100),
       fault("fault-atomic-bit39", "rel_l2", 100, replica=2)], [f0, f1, e1, e2]),
    Q(README, "Exercise 6", "(`bit=40`, a change of {}) a third observer", rel_change("fault-atomic-bit40", ex6b40), e2),
    Q(README, "Exercise 6", "INVALID (`detected_by_solve_check_step: {}`, beside the replicas' `detected_above_noise_step: {}`)",
      [fault_yaml("fault-atomic-bit40", k, ex6b40) for k in ("detected_by_solve_check_step", "detected_above_noise_step")], i),
    Q(README, "Exercise 7", "by rel_l2 **{}** with the network at the deck's rtol 1e-10, **{}** at rtol 1e-12 and **{}** without the network",
      [chaos("rel_l2", 1000), c7("rtol12", "rel_l2"), c7("none", "rel_l2")], e2),
    Q(README, "Exercise 7", "(past 1e-13 at step {} at rtol 1e-10, at step {} at rtol 1e-12)", JUMP, i),
    Q(README, "Exercise 7", "100x tighter tolerance, {}x smaller difference at step 1000; the solver alone stays {} decades below",
      [RATIO12, DECADES_NONE], [i, f1]),
    Q(README, "Exercise 7", "iterations over the 1000 steps: {} at rtol 1e-10, {} at rtol 1e-12, {} without the network",
      [its(ex2, A2Y), its(ex7, "out/lab/chaos-rtol12.yaml"), its(ex7, "out/lab/chaos-none.yaml")], i),
    Q(README, "Wrap-up", "rel_l2 {} at step 100, {} at 1000, {} at 4000, {} at 7000, {} at 8500, **{} at 9000** ({} digits:",
      [full("rel_l2", n) for n in (100, 1000, 4000, 7000, 8500, 9000)] + [full("digits", 9000)], [e2] * 5 + [g(2), f2]),
    Q(README, "Wrap-up", "is **{} decades per 1000 steps**, an e-folding time of **{} steps**", FULL_RATE, [f2, f0]),
    Q(README, "Wrap-up", "The window spans steps {}-{}, where exercise", FULL_WINDOW, i),
    Q(README, "Wrap-up", "grows at {} decades per 1000 steps and reaches 1e-2 first at step {}, against seed 1's {}:",
      [SEED2_RATE] + HIT, [f2, i, i]),
    Q(README, "Wrap-up", "physics reaches only {} by step 9000 (exercise 7", none9000.yaml("out/lab/chaos-none-9000.yaml", "replica_final_rel_l2", 1), e2),
    # --------------------------------------------------------------- answers
    Q(ANSWERS, "Exercise 1", "element uniform alpha = {} (median {}, R^2 {})",
      [fit("uniform", "alpha"), fit("uniform", "alpha_median"), fit("uniform", "r2")], [f3, f3, f2]),
    Q(ANSWERS, "Exercise 1", "normal {} (R^2 {}; median {})", [fit("normal", "alpha"), fit("normal", "r2"), fit("normal", "alpha_median")],
      [f3, f2, f3], tol=REL),
    Q(ANSWERS, "Exercise 1", "block uniform over 3+ blocks alpha = {}, over all N {} (meaningless); element/block max|V_s| at 1e5: {}x",
      [fit("uniform_from_3_blocks", "alpha", "block"), fit("uniform", "alpha", "block"),
       ex1.yaml("out/lab/sums.yaml", "element_over_block", "uniform")], [f2, f2, f1]),
    Q(ANSWERS, "Exercise 1", "block V_s = 0 for all {} arrays at N = 1025 and",
      Derived("the fewest zeros of block at N = 1025 and 2048 (both distributions)", lambda *z: min(z),
              *[blocks("block", d, n, "zeros") for d in ("uniform", "normal") for n in (1025, 2048)]), i),
    Q(ANSWERS, "Exercise 1", "{} of 100 zeros at 1000 (max {}); at 1e5 max {} against element's {}.",
      [blocks("block", "uniform", 1000, "zeros"), blocks("block", "uniform", 1000, "max_abs_vs"),
       blocks("block", "uniform", 100000, "max_abs_vs"), blocks("element", "uniform", 100000, "max_abs_vs")], [i, e2, e2, e2]),
    Q(ANSWERS, "Exercise 1", "`(0.1 + 0.2) + 0.3` = {}, `0.1 + (0.2 + 0.3)` = {}.",
      [ex1.stdout(r"^([0-9.]+) [0-9.]+ (?:True|False)$"), ex1.stdout(r"^[0-9.]+ ([0-9.]+) (?:True|False)$")], s),
    Q(ANSWERS, "Exercise 1", "The measured alpha is {}-{}.", [fit("uniform", "alpha"), fit("uniform", "alpha_median")], f2),
    Q(ANSWERS, "Exercise 1", "(measured {} at 1e5 here", ex1.yaml("out/lab/sums.yaml", "element_over_block", "uniform"), f1),
    Q(ANSWERS, "Exercise 1", "median is clean ({}); the maximum jumps ({} at N = 1000 for element in the second table",
      [fit("normal", "alpha_median"), blocks("element", "normal", 1000, "max_abs_vs")], [f2, e2], tol=REL),
    Q(ANSWERS, "Exercise 2", "(first_divergent_step {}; V_c {}, rel_l2 {}, i.e. one point",
      [R2.yaml(A2Y, "replica_first_divergent_step", 1), chaos("vc", 1), chaos("rel_l2", 1)], [i, g(2), e2]),
    Q(ANSWERS, "Exercise 2", "V_c {} at step 10, {} (every point) first at step {};",
      [chaos("vc", 10), Derived("the largest V_c", max, ex2.nc(A2, "vc", replica=1)), VC1_STEP], [g(2), g(2), i]),
    Q(ANSWERS, "Exercise 2", "rel_l2 {} at step 10, {} at 100, {} at 200, {} at 500, {} at 1000 (digits {});",
      [chaos("rel_l2", n) for n in (10, 100, 200, 500, 1000)] + [chaos("digits", 1000)], [e2] * 5 + [f1]),
    Q(ANSWERS, "Exercise 2", "the tolerance, 1e-10, passed at step {}, then {} decades)", FLOOR2, [i, f1]),
    Q(ANSWERS, "Exercise 2", "Deterministic and reproducible: digits {} at every step, first divergent step {}.",
      [ORDERED_DIGITS, ORDERED_FDS], [f0, s]),
    Q(ANSWERS, "Exercise 2", "right away: V_c {} (one grid point in twenty differs), rel_l2 {} (below",
      [chaos("vc", 1), chaos("rel_l2", 1)], [g(2), e2]),
    Q(ANSWERS, "Exercise 2", "(every point differs, step {}) while rel_l2 is still {}:",
      [VC1_STEP, Derived("rel_l2 at the first step with V_c = 1", lambda vc, r: r[next(k for k, x in enumerate(vc) if x >= 1.0)],
                         ex2.nc(A2, "vc", replica=1), ex2.nc(A2, "rel_l2", replica=1))], [i, e1]),
    Q(ANSWERS, "Exercise 2", "e.g. {} digits at step 100 ... {} at 1000 here", [chaos("digits", 100), chaos("digits", 1000)], f1),
    Q(ANSWERS, "Exercise 2", "and above it the record rises by {} decades, fewer", FLOOR2[1], f1),
    Q(ANSWERS, "Exercise 2", "seed 2 grows at {} decades per 1000 steps against seed 1's {}:", [SEED2_RATE, FULL_RATE[0]], f2),
    Q(ANSWERS, "Exercise 2", "Extrapolating from {} at 1000", chaos("rel_l2", 1000), e2),
    Q(ANSWERS, "Exercise 3", "from the second step on = {} epochs", ex3.yaml(T3Y, "train_epochs_total"), i),
    Q(ANSWERS, "Exercise 3", "replica 0: {} / {} at epoch 0, {} / {} at 10, {} / {} at 100, {} / {} at 400, {} / {} at 800, {} / {} at the end (epoch {})",
      [weights(n, r) for n in (0, 10, 100, 400, 800) for r in (1, 2)]
      + [ex3.yaml(T3Y, "replica_final_weights_rel_l2", r) for r in (1, 2)] + [last_epoch_of_step(300)],
      [e2] * 10 + [g(2)] * 2 + [i]),
    Q(ANSWERS, "Exercise 3", "Loss at epoch 100: {}, {}, {} ({} digits); at 400: {}, {}, {}; final: {}, {}, {} (V_s {}, {}).",
      [loss(100, r) for r in (0, 1, 2)] + [LOSS_DIGITS100] + [loss(400, r) for r in (0, 1, 2)]
      + [ex3.yaml(T3Y, "replica_final_loss", r) for r in (0, 1, 2)] + [ex3.yaml(T3Y, "replica_final_loss_vs", r) for r in (1, 2)],
      [g(6)] * 3 + [f0] + [e(4)] * 3 + [e(3)] * 3 + [g(2)] * 2),
    Q(ANSWERS, "Exercise 3", "error: {}% / {}% of the points beyond 10% of it, {}% / {}% beyond 50%, {}% / {}% beyond 100%. Fields: {} / {} digits.",
      [ex3.yaml(T3Y, k, r) for k in ("replica_final_churn_10", "replica_final_churn_50", "replica_final_churn") for r in (1, 2)]
      + [ex3.yaml(T3Y, "replica_final_digits", r) for r in (1, 2)], [pct(2)] * 6 + [f1] * 2),
    Q(ANSWERS, "Exercise 3", "After 40 steps: loss V_s {} / {}, weights {} / {}, churn {} at every level, fields {} / {} digits. The losses agree to better than 1e-4 until epoch {}.",
      [loss_vs40(1), loss_vs40(2), weights40(1), weights40(2), CHURN40, at40("digits", 1), at40("digits", 2), LOSS_1E4],
      [e2] * 4 + [g(1), f1, f1, i]),
    Q(ANSWERS, "Exercise 3", "none after 40 steps (weights {} apart)", weights40(1), e1),
    Q(ANSWERS, "Exercise 3", "drift apart by {} while the losses differ by {} (replica 1, epoch 400)",
      [weights(400, 1), loss_vs(400, 1).then(abs, "|V_s|")], e2),
    Q(ANSWERS, "Exercise 5", "| 1e-4 | {} | {} | {} | {} | {} |", EX5_ROW("1e-4"), [f2, g(2), i, f2, i]),
    Q(ANSWERS, "Exercise 5", "| 1e-6 | {} | {} | {} | {} | {} |", EX5_ROW("1e-6"), [f2, g(2), i, f2, i]),
    Q(ANSWERS, "Exercise 5", "| 1e-8 | {} | {} | {} | {} | {} |", EX5_ROW("1e-8"), [f2, g(2), i, f2, i]),
    Q(ANSWERS, "Exercise 5", "| 1e-10 | {} | {} | {} | {} | {} |", EX5_ROW("1e-10"), [f2, e2, i, f2, i]),
    Q(ANSWERS, "Exercise 5", "physics: {} digits at 1e-4, {} at 1e-10. At 1e-4 the guess often meets the tolerance outright ({} iterations in 100 steps)",
      [tol("guess", "1e-4", "replica_final_digits", 1), tol("guess", "1e-10", "replica_final_digits", 1),
       tol("guess", "1e-4", "ksp_iterations_total")], [f1, f1, i]),
    Q(ANSWERS, "Exercise 5", "`none` stays at ~{} digits", tol("none", "1e-10", "replica_final_digits", 1), f1),
    Q(ANSWERS, "Exercise 5", "network's difference: a {} weight difference", tol("guess", "1e-10", "replica_final_weights_rel_l2", 1), e1),
    Q(ANSWERS, "Exercise 6", "| reproducible, 2 replicas, bit 0 | {} (one ulp) | yes, replicas, step {} ({}) | {} | 0 (bitwise) | {} / - |",
      [rel_change("fault-repro-bit0"), fault_yaml("fault-repro-bit0", "detected_by_replicas_step"),
       ex6.yaml("out/lab/fault-repro-bit0.yaml", "verification"), fault("fault-repro-bit0", "rel_l2", 20),
       fault("fault-repro-bit0", "digits", 100)], [e2, i, s, e2, f1]),
    Q(ANSWERS, "Exercise 6", "| atomic, 3 replicas, bit 0 | {} | no ({}) | {} | {} | {} / {} |",
      [rel_change("fault-atomic-bit0"), ex6.yaml("out/lab/fault-atomic-bit0.yaml", "verification"),
       fault("fault-atomic-bit0", "rel_l2", 20), fault("fault-atomic-bit0", "rel_l2", 20, replica=2),
       fault("fault-atomic-bit0", "digits", 100), fault("fault-atomic-bit0", "digits", 100, replica=2)], [e2, s, e2, e2, f1, f1]),
    Q(ANSWERS, "Exercise 6", "| atomic, 3 replicas, bit 39 | {} | yes, above noise, step {} ({}) | {} | {} | {} / {} |",
      [rel_change("fault-atomic-bit39"), fault_yaml("fault-atomic-bit39", "detected_above_noise_step"),
       ex6.yaml("out/lab/fault-atomic-bit39.yaml", "verification"),
       fault("fault-atomic-bit39", "rel_l2", 20), fault("fault-atomic-bit39", "rel_l2", 20, replica=2),
       fault("fault-atomic-bit39", "digits", 100), fault("fault-atomic-bit39", "digits", 100, replica=2)], [e2, i, s, e2, e2, f1, f1]),
    Q(ANSWERS, "Exercise 6", "| atomic, 3 replicas, bit 40 | {} | yes, above noise and solve check, step {}; the run stops there ({}) | {} | {} | - |",
      [rel_change("fault-atomic-bit40", ex6b40), fault_yaml("fault-atomic-bit40", "detected_by_solve_check_step", ex6b40),
       ex6b40.yaml("out/lab/fault-atomic-bit40.yaml", "verification"),
       fault("fault-atomic-bit40", "rel_l2", 20, job=ex6b40), fault("fault-atomic-bit40", "rel_l2", 20, replica=2, job=ex6b40)],
      [e2, i, s, e2, e2]),
    Q(ANSWERS, "Exercise 6", "any difference, {} here", fault("fault-repro-bit0", "rel_l2", 20), mag),
    Q(ANSWERS, "Exercise 6", "(each step's rounding, {} already at step 20", fault("fault-atomic-bit0", "rel_l2", 20, replica=2), e1),
    Q(ANSWERS, "Exercise 6", "at that step*: here ~{} relative at step 20",
      fault("fault-atomic-bit0", "rel_l2", 20, replica=2).then(lambda x: 10 * x, "10 x"), e1),
    Q(ANSWERS, "Exercise 6", "the noise grows with the run ({} by step 100). Bit 39 ({} on one entry of one product, {} on the field)",
      [fault("fault-atomic-bit39", "rel_l2", 100, replica=2), rel_change("fault-atomic-bit39"), fault("fault-atomic-bit39", "rel_l2", 20)], e2),
    Q(ANSWERS, "Exercise 6", "it fires at step {} (`detected_by_checksum_step: {}`, ratio {} to its threshold, {} false alarms in {} checks)",
      [ex6q3.yaml("out/lab/q3-bit39.yaml", "fault", *k) for k in (("first_alarm", "step"), ("detected_by_checksum_step",),
                                                                  ("worst_check_ratio",), ("false_alarms",), ("operator_checks",))],
      [i, i, g(2), i, i]),
    Q(ANSWERS, "Exercise 6", "one bit lower (bit 38) the ratio is {}: the checksum stays silent",
      Derived("the worst check ratio of bit 38, when it gave no alarm", lambda r, a: r if a == 0 else f"{r} with {a} alarms",
              ex6q3b.yaml("out/lab/q3-bit38.yaml", "fault", "worst_check_ratio"), ex6q3b.yaml("out/lab/q3-bit38.yaml", "fault", "alarms")),
      lambda v: g(2)(v) if isinstance(v, float) else s(v)),
    Q(ANSWERS, "Exercise 7", "rel_l2 of replica 1 at step 1000: {} (guess, rtol 1e-10: exercise 2's run), {} (guess, rtol 1e-12), {} (`-coupling none`, rtol 1e-10); at step 100: {}, {} and {}.",
      [chaos("rel_l2", 1000), c7("rtol12", "rel_l2"), c7("none", "rel_l2"), chaos("rel_l2", 100), c7("rtol12", "rel_l2", 100),
       c7("none", "rel_l2", 100)], e2),
    Q(ANSWERS, "Exercise 7", "Krylov iterations in 1000 steps: {}, {} and {}.",
      [its(ex2, A2Y), its(ex7, "out/lab/chaos-rtol12.yaml"), its(ex7, "out/lab/chaos-none.yaml")], i),
    Q(ANSWERS, "Exercise 7", "A 100x tighter tolerance gives a {}x smaller difference", RATIO12, i),
    Q(ANSWERS, "Exercise 7", "last-bit level, {} decades below", DECADES_NONE, f1),
    Q(ANSWERS, "Exercise 7", "(docs/metrics.md: {} at step 9000)", none9000.yaml("out/lab/chaos-none-9000.yaml", "replica_final_rel_l2", 1), e2),
    Q(ANSWERS, "Exercise 7", "(exercise 3: {} after the first epoch, growing)", weights(0, 1), e1),
    Q(ANSWERS, "Exercise 7", "(step {} at rtol 1e-10, step {} at 1e-12 for rel_l2 > 1e-13)", JUMP, i),
    Q(ANSWERS, "Exercise 7", "for more iterations ({}x here); dropping the network delays it most but costs {}x the iterations",
      [Derived("iterations at rtol 1e-12 over 1e-10", lambda a, b: b / a, its(ex2, A2Y), its(ex7, "out/lab/chaos-rtol12.yaml")),
       Derived("iterations without the network over with it", lambda a, b: b / a, its(ex2, A2Y), its(ex7, "out/lab/chaos-none.yaml"))], g(2)),
    Q(ANSWERS, "Wrap-up", "rel_l2 of replica 1: {} at step 100, {} at 1000, {} at 2000, {} at 4000, {} at 6000, {} at 7000, {} at 8000, {} at 8500, {} at 9000 ({} digits); growth {} decades per 1000 steps, e-folding {} steps.",
      [full("rel_l2", n) for n in (100, 1000, 2000, 4000, 6000, 7000, 8000, 8500, 9000)] + [full("digits", 9000)] + FULL_RATE,
      [e2] * 8 + [g(2), f2, f2, f0]),
    Q(ANSWERS, "Wrap-up", "the difference grows at {} decades per 1000 steps but from {}, and reaches only {} by step 9000",
      [none9000.yaml("out/lab/chaos-none-9000.yaml", "replica_growth_decades_per_1000_steps", 1),
       none9000.nc("out/lab/chaos-none-9000.nc", "rel_l2", step=100, replica=1),
       none9000.yaml("out/lab/chaos-none-9000.yaml", "replica_final_rel_l2", 1)], [f2, mag, e2]),
    Q(ANSWERS, "Wrap-up", "its window spans steps {}-{}, where the difference", FULL_WINDOW, i),
]

# Sections whose numbers are not results: the time plan (seconds, measured
# once and dated there) and how the lab is tested.
IGNORE_SECTIONS = ("Time plan", "How this lab is tested")

# Decimal numbers and percentages of the prose that no run here produces.
UNHELD = [
    (README, "Exercise 4", "deterministic **0.39x**, reproducible **0.50x**;\nsolver half 0.14x / 0.19x",
     "timing ratios from docs/performance.md (another machine state; timings are never exact)"),
    (README, "Exercise 4", "surrogate half 1.01x /\n1.27x", "timing ratios from docs/performance.md"),
    (README, "Exercise 4", "spread by up to 33% on this small deck", "timing spread from docs/performance.md"),
    (README, "Exercise 4", "(deterministic <= 1.05x, reproducible <= 1.25x", "the project's targets, not results"),
    (ANSWERS, "Exercise 4", "grayscott-small `-repeat 3`: loop ratios deterministic\n0.39x, reproducible 0.50x; solver half 0.14x / 0.19x; surrogate half 1.01x\n/ 1.27x. grayscott-medium `-repeat 2`: loop 0.43x / 0.51x, solver half\n0.15x / 0.18x, surrogate half 1.02x / 1.21x. Repeats of one variant spread\nby up to 33% on the small deck. (On 2026-11-22, before issues 11 and 28\nmade the train step and the CG faster, the small deck measured loop 0.67x /\n1.67x and surrogate half 1.51x / 3.08x.)",
     "timing ratios from docs/performance.md"),
    (ANSWERS, "Exercise 4", "builds (ratio ~0.2x)", "timing ratios from docs/performance.md"),
    (ANSWERS, "Exercise 4", "about 1.2-1.3x the atomic step", "timing ratios from docs/performance.md"),
    (ANSWERS, "Exercise 4", "both ordered builds beat 1.0x here", "the project's target"),
    (ANSWERS, "Exercise 4", "the\n   reproducible loop costs about 1.2x", "timing ratios from docs/performance.md"),
    (ANSWERS, "Exercise 4", "A spread of 8-34% between repeats cannot resolve a 5% target", "timing spread from docs/performance.md; the target"),
    (README, "Exercise 2", "(rel_l2 ~ 0.1)", "a threshold (visibly different patterns), not a result"),
    (README, "Exercise 4", "tell 1.05x from 1.00x", "the target and no cost, not results"),
    (ANSWERS, "Exercise 2", "gives 0.1 around step 8500-9000", "an extrapolation the question asks for; the wrap-up holds the measured values"),
    (ANSWERS, "Exercise 3", "as 100% changes", "a definition, not a result"),
    (README, "Exercise 6", "Run time: 18 s here (6.5 s reproducible with 2 replicas, 6.0 and 3.3 s atomic with 3).",
     "seconds: measured once and dated in the time plan, never exact"),
    (README, "Wrap-up", "3.6 minutes with `-threads 1` here", "seconds: measured once and dated in the time plan"),
    (ANSWERS, "Exercise 3", "(0% to 100% churn on one run as it went from 1e-2 to 1e-6)",
     "measured with the churn definition this project dropped (docs/metrics.md); no lab run makes it"),
]
