"""Questionnaire aggregates: SUS per participant with mean, 95 % CI, the 68 benchmark and a
grade, and Likert distributions for diverging stacked bars (paper Figures 10 and 12).

Grades follow the Sauro–Lewis curved grading scale (2016, 5-point SUS); adjectives follow
Bangor, Kortum & Miller (2009) by the nearest adjective mean. A 7-point SUS is rescaled linearly
(study.questionnaires) and its grade is marked as indicative only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
from scipy import stats

from study.questionnaires import Questionnaire, sus_score

SUS_BENCHMARK = 68.0
# (lower bound, grade), Sauro & Lewis (2016), Table 8.5
SAURO_LEWIS = ((84.1, "A+"), (80.8, "A"), (78.9, "A-"), (77.2, "B+"), (74.1, "B"),
               (72.6, "B-"), (71.1, "C+"), (65.0, "C"), (62.7, "C-"), (51.7, "D"), (0.0, "F"))
# mean SUS per adjective, Bangor, Kortum & Miller (2009)
BANGOR = (("Worst imaginable", 12.5), ("Awful", 20.3), ("Poor", 35.7), ("OK", 50.9),
          ("Good", 71.4), ("Excellent", 85.5), ("Best imaginable", 90.9))


def sus_grade(score: float) -> str:
    """The Sauro–Lewis curved grade (A+ .. F) of a SUS score."""
    for bound, grade in SAURO_LEWIS:
        if score >= bound:
            return grade
    return "F"


def sus_adjective(score: float) -> str:
    """Bangor's adjective whose mean SUS is nearest to ``score``."""
    return min(BANGOR, key=lambda a: abs(a[1] - score))[0]


def mean_ci(values: Iterable[float], level: float = 0.95) -> tuple[float, float, float]:
    """Mean and its t-based confidence interval (NaN bounds for fewer than two values)."""
    xs = [float(v) for v in values]
    if not xs:
        return math.nan, math.nan, math.nan
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, math.nan, math.nan
    sem = stats.sem(xs)
    half = float(stats.t.ppf((1 + level) / 2, len(xs) - 1) * sem)
    return m, m - half, m + half


def sus_points(questionnaires: Iterable[Questionnaire]) -> tuple[str, int] | None:
    """(questionnaire id, points) of the study's SUS questionnaire, or None."""
    for q in questionnaires:
        if q.builtin in ("sus5", "sus7"):
            return q.id, int(q.builtin[-1])
    return None


def sus_scores(answers: Mapping[str, Mapping[str, Any]], qid: str, points: int,
               conditions: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per participant with all ten SUS answers: participant, condition, sus."""
    rows = []
    for pid, ans in answers.items():
        items = {k.split("/", 1)[1]: v for k, v in ans.items() if k.startswith(qid + "/")}
        try:
            score = sus_score(items, points=points)
        except ValueError:
            continue
        rows.append({"participant": pid, "condition": (conditions or {}).get(pid, ""),
                     "sus": score})
    return pd.DataFrame(rows, columns=["participant", "condition", "sus"])


@dataclass(frozen=True)
class SusSummary:
    """Mean SUS, its 95 % CI, the one-sample t-test against 68, grade and adjective."""

    n: int
    mean: float
    ci_low: float
    ci_high: float
    sd: float
    t: float
    p: float
    grade: str
    adjective: str
    note: str

    def needs(self) -> str:
        """What the CI and the t-test still need ('' when both can be computed)."""
        if self.n < 2:
            return (f"The 95 % CI and the t-test against {SUS_BENCHMARK:g} need at least 2 "
                    f"participants (there {'is' if self.n == 1 else 'are'} {self.n}).")
        if not self.sd > 0:
            return "The t-test needs scores that differ (all are equal)."
        return ""

    def ci_text(self) -> str:
        """The 95 % CI as a person reads it, or what it needs (never 'nan–nan')."""
        if self.n < 2:
            return f"needs at least 2 participants (have {self.n})"
        return f"{self.ci_low:.1f}–{self.ci_high:.1f}"

    def test_text(self) -> str:
        """The t-test against the benchmark as 't, p', or what it needs."""
        if self.n < 2:
            return f"needs at least 2 participants (have {self.n})"
        if not self.sd > 0:
            return "needs scores that differ (all are equal)"
        return f"{self.t:.2f}, {self.p:.3f}"


def sus_summary(scores: Iterable[float], points: int = 5,
                benchmark: float = SUS_BENCHMARK) -> SusSummary:
    """Summarise SUS scores; the grade is indicative only for the 7-point form."""
    xs = [float(s) for s in scores]
    m, lo, hi = mean_ci(xs)
    sd = float(pd.Series(xs).std(ddof=1)) if len(xs) > 1 else math.nan
    if len(xs) > 1 and sd > 0:
        res = stats.ttest_1samp(xs, benchmark)
        t, p = float(res.statistic), float(res.pvalue)
    else:
        t = p = math.nan
    note = "" if points == 5 else ("SUS, 7-point, linearly rescaled: grade and adjective are "
                                   "indicative (norms come from the 5-point form)")
    grade = sus_grade(m) if xs else ""
    return SusSummary(len(xs), m, lo, hi, sd, t, p, grade,
                      sus_adjective(m) if xs else "", note)


def likert_long(answers: Mapping[str, Mapping[str, Any]],
                questionnaires: Iterable[Questionnaire],
                conditions: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per participant x Likert item: raw answer, reverse-scored value, group, text."""
    rows = []
    for q in questionnaires:
        for it in q.items:
            if it.kind != "likert":
                continue
            for pid, ans in answers.items():
                v = ans.get(f"{q.id}/{it.id}")
                if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= it.points:
                    continue
                rows.append({"participant": pid, "condition": (conditions or {}).get(pid, ""),
                             "questionnaire": q.id, "item": it.id, "group": it.group,
                             "text": it.text, "points": it.points, "reverse": it.reverse,
                             "value": v, "scored": it.points + 1 - v if it.reverse else v})
    return pd.DataFrame(rows, columns=["participant", "condition", "questionnaire", "item",
                                       "group", "text", "points", "reverse", "value", "scored"])


def likert_distribution(long: pd.DataFrame, by: tuple[str, ...] = ("group", "condition")
                        ) -> pd.DataFrame:
    """Counts and shares of every answer level per item (and ``by``), zeros included."""
    cols = ["questionnaire", *by, "item", "points", "level", "count", "share", "n", "mean"]
    if long.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    keys = ["questionnaire", *by, "item", "points"]
    for key, grp in long.groupby(keys, sort=False, dropna=False):
        rec = dict(zip(keys, key, strict=True))
        n = len(grp)
        for level in range(1, int(rec["points"]) + 1):
            c = int((grp["value"] == level).sum())
            rows.append({**rec, "level": level, "count": c, "share": c / n, "n": n,
                         "mean": float(grp["value"].mean())})
    return pd.DataFrame(rows, columns=cols)
