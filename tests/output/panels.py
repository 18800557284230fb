"""tests/output/panels.py SCRIPT ARGS...: runs a plotting script (plot.py) with every figure it saves checked
for empty panels (docs/output.md: a figure draws only panels that hold something; what is constant is said in
its title); appends "PNG<TAB>ok|EMPTY ...<TAB>titles" lines to panels.log in the working directory."""
import os, runpy, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.figure
import numpy as np
from matplotlib.collections import Collection
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

def values(a):
    a = np.ma.filled(np.ma.masked_invalid(np.ma.asarray(a, dtype=float)), np.nan).ravel()
    return a[np.isfinite(a)]

def contents(ax):
    """What the Axes draws in data coordinates: [(kind, finite values)]; axvline, axhline, axvspan (axes coordinates
    along one direction) only mark, texts and legend-only lines only say."""
    out = []
    for a in ax.get_children():
        if not a.get_visible():
            continue
        if isinstance(a, Line2D) and a.get_transform() is ax.transData:
            x, y = np.asarray(a.get_xdata(), float), np.asarray(a.get_ydata(), float)
            ok = np.isfinite(x) & np.isfinite(y)
            if ok.any():
                out.append(("line", y[ok]))
        elif isinstance(a, AxesImage):
            out.append(("image", values(a.get_array())))
        elif isinstance(a, Collection) and a.get_transform() is ax.transData:
            v = np.concatenate([values(p.vertices) for p in a.get_paths()] + [np.zeros(0)])
            out.append(("collection", v))
        elif isinstance(a, Patch) and a.get_data_transform() is ax.transData:  # bars: their corners in data space
            out.append(("patch", values(a.get_patch_transform().transform(a.get_path().vertices))))
    return [(k, v) for k, v in out if v.size]

def empty(ax):
    """Why the panel shows nothing (None if it shows something): no finite data, only constant images (a difference 0
    everywhere), or only lines at 0 throughout (a series that is 0 at every step)."""
    c = contents(ax)
    if not c:
        return "no finite data"
    if all(k == "image" for k, _ in c) and all(v.min() == v.max() for _, v in c):
        return "an image of one value"
    if all(k == "line" for k, _ in c) and all(not v.any() for _, v in c):
        return "only lines at 0"
    return None

def check(fig, path):
    bad = []
    for k, ax in enumerate(fig.axes):
        if hasattr(ax, "_colorbar"):
            continue
        why = empty(ax)
        if why:
            label = (ax.get_title() or ax.get_ylabel() or "untitled").replace("\n", " ")
            bad.append(f"axes {k} ({label}): {why}")
    titles = [fig._suptitle.get_text() if fig._suptitle else ""] + [a.get_title() for a in fig.axes]
    title = " | ".join(t for t in titles if t)
    title = title.replace("\n", " ")
    with open(os.environ["PANELS_LOG"], "a") as log:
        log.write(f"{os.path.normpath(str(path))}\t{'EMPTY ' + '; '.join(bad) if bad else 'ok'}\t{title}\n")

save = matplotlib.figure.Figure.savefig
def checked_savefig(fig, fname, *a, **kw):
    check(fig, fname)
    return save(fig, fname, *a, **kw)
matplotlib.figure.Figure.savefig = checked_savefig
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
runpy.run_path(sys.argv[0], run_name="__main__")
