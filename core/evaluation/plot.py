"""The Figure-5 plot of the §7 evaluation: per-turn median gold-label entropy and similarity."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

_STYLE = {
    "cluster-grouped": ("#1f4e9c", "-"), "cluster-atomic": ("#5b8bd6", "-"),
    "eig-atomic": ("#d9822b", "--"), "max-prob-first": ("#c0392b", "--"),
    "random": ("#e67e73", ":"),
}


def plot_per_user(summary: dict, strategies: tuple[str, ...], out: str, *,
                  headline: str) -> list[str]:
    """One Figure-5 plot per simulated user (first population); ``out`` is the headline's.

    The other users' plots go beside it as ``<stem>.<user><suffix>``; returns the paths.
    """
    population = next(iter(summary["results"]))
    per_user = summary["results"][population]
    path = Path(out)
    written = []
    for user, group in per_user.items():
        target = path if user == headline else path.with_name(f"{path.stem}.{user}{path.suffix}")
        plot_figure5(group, strategies, str(target),
                     title=f"simulated user: {user} · population: {population}")
        written.append(str(target))
    return written


def plot_figure5(summary: dict, strategies: tuple[str, ...], out: str, title: str = "") -> None:
    """Rows: entropy, similarity; columns: ambiguity types; lines: strategies with 95 % CIs.

    ``summary`` has ``overall`` and ``by_type`` groups of one user and population.
    """
    types = sorted(summary["by_type"]) or ["all"]
    fig, axes = plt.subplots(2, len(types), figsize=(4.2 * len(types), 6.4), squeeze=False,
                             sharex=True)
    for col, amb in enumerate(types):
        group = summary["by_type"].get(amb, summary["overall"])
        for row, metric in enumerate(("entropy", "similarity")):
            ax = axes[row][col]
            for s in strategies:
                data = group.get(s, {}).get(metric)
                if not data:
                    continue
                colour, dash = _STYLE.get(s, ("grey", "-"))
                turns = range(len(data["median"]))
                ax.plot(turns, data["median"], dash, color=colour, label=s, linewidth=1.8)
                ax.fill_between(turns, data["lo"], data["hi"], color=colour, alpha=0.15)
            if row == 0:
                ax.set_title(amb.capitalize())
            ax.set_ylabel("median gold-label entropy (bits)" if row == 0
                          else "median within-set similarity")
            if row == 1:
                ax.set_xlabel("turn")
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=130)
    plt.close(fig)
