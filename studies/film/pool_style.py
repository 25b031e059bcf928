"""How the film pools are written: alias and layout variants of hand-written base queries.

LLM samples of one reading differ in aliases (``f.title`` / ``films.title`` / ``T1.title``), in
line layout and in keyword case; :func:`variants` renders such variants of a template and
:func:`block` lays out a hand-written query. Used by the pool modules beside this one.
"""

from __future__ import annotations

import re

Pool = list[tuple[str, int]]

_CLAUSE = re.compile(
    r" (FROM|(?:INNER |LEFT |CROSS )?JOIN|WHERE|GROUP BY|HAVING|ORDER BY|LIMIT"
    r"|UNION(?: ALL)?|INTERSECT|EXCEPT) "
)
_SET_OPS = ("UNION", "INTERSECT", "EXCEPT")


def _depths(sql: str) -> list[int]:
    """Parenthesis depth at each character, ignoring parentheses inside string literals."""
    depths: list[int] = []
    depth, quoted = 0, False
    for ch in sql:
        if ch == "'":
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        depths.append(depth)
    return depths


def layout(sql: str, style: str) -> str:
    """Lay out a one-line query as 'line' (unchanged) or 'block' (one top-level clause per line).

    Subqueries stay inline, as models usually write them; set operations get a line of their own.
    """
    if style == "line":
        return sql
    if style != "block":
        raise ValueError(f"unknown layout '{style}'; use 'line' or 'block'")
    depths = _depths(sql)
    out: list[str] = []
    last = 0
    for m in _CLAUSE.finditer(sql):
        if depths[m.start()] != 0:
            continue
        word = m.group(1)
        out.append(sql[last:m.start()])
        out.append(f"\n{word}\n" if word.startswith(_SET_OPS) else f"\n{word} ")
        last = m.end()
    out.append(sql[last:])
    return "".join(out)


def render(template: str, tables: dict[str, str], alias: str) -> str:
    """Fill ``{k}`` (qualifier) and ``{K}`` (table declaration) slots in one alias style.

    Styles: 'full' (table names), 'short' (``films f``), 'as' (``films AS f``), 'upper'
    (``films F``), 'tn' (``films AS T1`` numbered in the order of ``tables``).
    """
    slots: dict[str, str] = {}
    for i, (key, table) in enumerate(tables.items(), start=1):
        if alias == "full":
            qual, decl = table, table
        elif alias == "short":
            qual, decl = key, f"{table} {key}"
        elif alias == "as":
            qual, decl = key, f"{table} AS {key}"
        elif alias == "upper":
            qual, decl = key.upper(), f"{table} {key.upper()}"
        elif alias == "tn":
            qual, decl = f"T{i}", f"{table} AS T{i}"
        else:
            raise ValueError(f"unknown alias style '{alias}'")
        slots[key] = qual
        slots[key.upper()] = decl
    return template.format(**slots)


def variants(template: str, tables: dict[str, str], *forms: tuple[str, str, int]) -> Pool:
    """Render one base query in several (alias style, layout, count) forms."""
    return [(layout(render(template, tables, a), lay), n) for a, lay, n in forms]


def block(sql: str, count: int = 1) -> tuple[str, int]:
    """A hand-written one-line query shown in block layout, with its count."""
    return layout(sql, "block"), count
