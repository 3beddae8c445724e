"""The analysis report's figures (matplotlib, headless), as PNG and SVG bytes.

Byte-identical for the same analysis: no dates in the metadata, a fixed salt for SVG ids."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")  # no display: a CI runner or a server
import matplotlib.pyplot as plt
import numpy as np

from fabricgen.analysis.balancing import Balancing, uplink_load_ratios

matplotlib.rcParams["svg.hashsalt"] = "fabricgen"
FORMATS = ("png", "svg")
COLOURS = {"ecmp": "#d62728", "flowlet": "#ff7f0e", "spray": "#2ca02c"}


def figures(balancing: Balancing) -> dict[str, bytes]:
    """{"link-load.png": ..., "link-load.svg": ..., "fct-stretch.*", "jct-vs-jobs.*"}"""
    made = {"link-load": _link_load(balancing), "fct-stretch": _stretch_cdf(balancing)}
    if balancing.sweep:
        made["jct-vs-jobs"] = _jct_vs_jobs(balancing)
    files = {}
    for name, figure in made.items():
        for kind in FORMATS:
            buffer = io.BytesIO()
            metadata = {"Date": None} if kind == "svg" else {"Software": None}
            figure.savefig(buffer, format=kind, metadata=metadata, dpi=110)
            files[f"{name}.{kind}"] = buffer.getvalue()
        plt.close(figure)
    return files


def _link_load(balancing: Balancing):
    figure, axes = plt.subplots(figsize=(6.4, 3.6))
    modes = list(balancing.samples)
    data = [uplink_load_ratios(balancing.samples[mode]) for mode in modes]
    axes.boxplot(data, tick_labels=modes, showfliers=True)
    axes.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    axes.set_ylabel("uplink load / its leaf's mean")
    axes.set_title("Load of every uplink, per balancing mode (seed 0)")
    figure.tight_layout()
    return figure


def _stretch_cdf(balancing: Balancing):
    figure, axes = plt.subplots(figsize=(6.4, 3.6))
    for mode, result in balancing.samples.items():
        stretch = np.sort(result.stretch)
        share = np.arange(1, len(stretch) + 1) / len(stretch)
        # the same steps drawn from the first point and the last of each run of equal values
        # (hundreds of thousands of flows share a few dozen stretches): the vertical runs between
        # them are one segment instead of one per flow, which matplotlib drew and the legend
        # placement scanned point by point
        keep = np.r_[0, np.flatnonzero(stretch[1:] != stretch[:-1]), len(stretch) - 1] if len(stretch) else np.zeros(0, dtype=int)
        axes.step(stretch[keep], share[keep], where="post", label=mode, color=COLOURS.get(mode))
    axes.set_xlabel("flow completion time / ideal")
    axes.set_ylabel("fraction of flows")
    axes.set_title("FCT stretch CDF (seed 0)")
    axes.legend()
    figure.tight_layout()
    return figure


def _jct_vs_jobs(balancing: Balancing):
    figure, axes = plt.subplots(figsize=(6.4, 3.6))
    jobs = sorted(balancing.sweep)
    for mode in balancing.options.modes:
        estimates = [balancing.sweep[j][mode].metrics["jct_ratio_worst"] for j in jobs]
        means = np.array([e.mean for e in estimates])
        errors = np.array([[e.mean - e.low for e in estimates], [e.high - e.mean for e in estimates]])
        axes.errorbar(jobs, means, yerr=np.nan_to_num(errors), marker="o", capsize=3, label=mode, color=COLOURS.get(mode))
    axes.set_xscale("log", base=2)
    axes.set_xlabel("concurrent jobs")
    axes.set_ylabel("slowest job's JCT / ideal")
    axes.set_title(f"JCT vs concurrent jobs ({balancing.options.placement} placement, 95 % CI)")
    axes.legend()
    figure.tight_layout()
    return figure
