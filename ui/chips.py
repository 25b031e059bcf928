"""Feature chips: the paper's query visualisation (keyword on black, value on grey) as HTML.

Pure functions returning HTML strings, so every panel renders features the same way and tests
can check the encoding without Streamlit. Roles follow §8.1's global colour encoding: the
current decision variable is red, implicitly included features carry a low-opacity red overlay,
likely-but-unconfirmed features in the Predicted Query are bordered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from html import escape

from sqlglot.errors import TokenError
from sqlglot.parser import Parser
from sqlglot.tokens import Tokenizer, TokenType

from core.engine.display import sql_value
from core.engine.features import Feature
from core.planpool.questions import phrases, render_question
from ui.headers import distinct_headers

RED = "#d62728"
RED_OVERLAY = "rgba(214, 39, 40, 0.28)"
GREY = "#e6e6e6"
BLACK = "#1f1f1f"

ROLES = ("plain", "decision", "implicit", "confirmed")
LABELS = ("sql", "plain", "both")  # a study condition's `labels:`: chips, sentences, or both

CSS = f"""
<style>
.pq-chips {{ display: flex; flex-wrap: wrap; gap: 4px 6px; line-height: 1.25; }}
.pq-chips.inline {{ display: inline-flex; vertical-align: middle; }}
.pq-chip {{ display: inline-flex; flex-wrap: wrap; border-radius: 4px; overflow: hidden;
  font-size: 0.82rem; font-family: ui-monospace, SFMono-Regular, Menlo, monospace;
  border: 2px solid transparent; max-width: 100%; box-sizing: border-box; }}
.pq-chip .kw {{ background: {BLACK}; color: #fff; padding: 1px 5px; font-weight: 600;
  white-space: nowrap; flex: none; }}
.pq-chip .val {{ background: {GREY}; color: {BLACK}; padding: 1px 5px; overflow-wrap: anywhere;
  word-break: normal; hyphens: none; min-width: 0; flex: 0 1 auto; }}
.pq-chip .badge {{ background: #fff; color: #444; padding: 1px 5px; font-size: 0.75rem;
  white-space: nowrap; align-self: center; flex: none; }}
.pq-chip.decision .val {{ background: {RED}; color: #fff; text-decoration: underline;
  text-decoration-thickness: 2px; text-underline-offset: 2px; }}
.pq-chip.implicit .val {{ background: linear-gradient({RED_OVERLAY}, {RED_OVERLAY}), {GREY}; }}
.pq-chip.confirmed .val {{ background: #f6c9c9; }}
.pq-chip.likely {{ border-color: {BLACK}; }}
.pq-legend {{ font-size: 0.75rem; color: #555; }}
.pq-labelled {{ display: inline-flex; flex-direction: column; gap: 1px; max-width: 100%; }}
.pq-labelled > .pq-chip {{ align-self: flex-start; }}
.pq-plain {{ font-size: 0.8rem; color: #444; line-height: 1.25; }}
.pq-chip.words {{ font-family: inherit; }}
.pq-question {{ font-size: 0.95rem; font-weight: 600; line-height: 1.35; margin: 2px 0;
  border-left: 4px solid {RED}; padding-left: 8px; }}
.pq-chip.plain.words .val {{ background: #f3f3f3; }}
</style>
"""


def breakable(text: str) -> str:
    """Escaped ``text`` that may wrap at spaces and after '.' or ',' but never inside a name.

    ``films.release_year`` can wrap as ``films.`` / ``release_year``; the browser's own
    emergency breaking splits a name only when it alone is wider than the column.
    """
    return "".join(escape(c) + ("<wbr>" if c in ".," else "") for c in text)


def plain_text(feature: Feature, names: Mapping[str, str] | None = None) -> str:
    """The feature as one plain-language Yes/No question (identifiers as the schema spells
    them), for readers who do not write SQL; cached (a rerun draws the same clauses)."""
    return _plain(feature, tuple(sorted((names or {}).items())))


@lru_cache(maxsize=8192)
def _plain(feature: Feature, names: tuple[tuple[str, str], ...]) -> str:
    return render_question([feature], names=dict(names)) if names else phrases(feature)[0]


def chip(feature: Feature, role: str = "plain", *, bordered: bool = False,
         badge: str = "", names: Mapping[str, str] | None = None, labels: str = "sql") -> str:
    """One feature as a keyword/value chip; ``role`` picks the colour encoding.

    ``names`` respells identifiers as the schema does; ``labels`` is ``sql`` (the chip),
    ``plain`` (the feature as a plain-language question, in the same colours) or ``both``
    (the chip with the question under it).
    """
    if role not in ROLES:
        raise ValueError(f"unknown chip role {role!r}; use one of {', '.join(ROLES)}")
    if labels not in LABELS:
        raise ValueError(f"unknown labels {labels!r}; use one of {', '.join(LABELS)}")
    classes = " ".join(c for c in ("pq-chip", role, "likely" if bordered else "") if c)
    extra = f'<span class="badge">{escape(badge)}</span>' if badge else ""
    words = plain_text(feature, names) if labels != "sql" else ""
    if labels == "plain":  # no SQL anywhere, not even in a title: the words are the chip
        return (f'<span class="{classes} words">'
                f'<span class="val">{escape(words)}</span>{extra}</span>')
    shown = sql_value(feature, names)
    value = f'<span class="val">{breakable(shown)}</span>' if shown else ""
    sql = (f'<span class="{classes}" title="{escape(words or feature.key)}">'
           f'<span class="kw">{escape(feature.keyword)}</span>{value}{extra}</span>')
    if labels == "both":
        return f'<span class="pq-labelled">{sql}<span class="pq-plain">{escape(words)}</span></span>'
    return sql


def chip_row(features: Iterable[Feature], *, decision: Iterable[str] = (),
             implicit: Iterable[str] = (), confirmed: Iterable[str] = (),
             bordered: Iterable[str] = (), inline: bool = False,
             names: Mapping[str, str] | None = None, labels: str = "sql") -> str:
    """A wrapped row of chips; features whose key is in ``decision``/``implicit`` get that role
    (``names`` and ``labels`` as in :func:`chip`)."""
    red, overlay, yes, border = set(decision), set(implicit), set(confirmed), set(bordered)
    parts = []
    for f in features:
        role = ("decision" if f.key in red else "implicit" if f.key in overlay
                else "confirmed" if f.key in yes else "plain")
        parts.append(chip(f, role, bordered=f.key in border, names=names, labels=labels))
    tag = "span" if inline else "div"
    return f'<{tag} class="pq-chips{" inline" if inline else ""}">{"".join(parts)}</{tag}>'


def question_line(features: Iterable[Feature], names: Mapping[str, str] | None = None,
                  role: str = "decision") -> str:
    """A decision variable (a conjunction of features) as one plain-language question."""
    return (f'<p class="pq-question pq-{role}-words">'
            f"{escape(render_question(list(features), names=names))}</p>")


# what the legend's chips say: their black part in lower case, so it reads as a name for what
# is shown there, not as an SQL keyword (it said KEYWORD, in the capitals of SELECT and WHERE)
LEGEND_WORD = "query word"
LEGEND_VALUES = (  # (grey or red part, role, what hovering it says)
    ("its value", "plain", "A part of a query: a query word on black, its value on grey"),
    ("the part asked about", "decision", "Red: the part of the query the question asks about"),
    ("comes with it", "implicit", "Light red: comes with the part asked about (every remaining "
                                  "query that has that part has this too)"))


def legend(labels: str = "sql") -> str:
    """A one-line key to the chip colours, shown in the Decision Space under a clause question's
    chips (in words when clauses read as plain-language questions)."""
    if labels == "plain":
        def item(text: str, role: str) -> str:
            return f'<span class="pq-chip {role} words"><span class="val">{text}</span></span>'
        return (f'<div class="pq-legend pq-chips">{item("a part of the query", "plain")}'
                f'{item("the part asked about", "decision")}'
                f'{item("comes with it", "implicit")}</div>')
    return ('<div class="pq-legend pq-chips">'
            + "".join(f'<span class="pq-chip {role}" title="{escape(title)}">'
                      f'<span class="kw">{LEGEND_WORD}</span><span class="val">{value}</span>'
                      "</span>" for value, role, title in LEGEND_VALUES)
            + "</div>")


_LITERALS = {TokenType.STRING, TokenType.NATIONAL_STRING, TokenType.RAW_STRING,
             TokenType.BIT_STRING, TokenType.HEX_STRING, TokenType.BYTE_STRING,
             TokenType.HEREDOC_STRING, TokenType.UNICODE_STRING, TokenType.IDENTIFIER}
_NOT_KEYWORDS = {TokenType.VAR, TokenType.NUMBER, *_LITERALS, *Parser.TYPE_TOKENS}
_KEYWORDS = set(Tokenizer.KEYWORDS.values()) - _NOT_KEYWORDS  # SELECT, NATURAL, ILIKE, LATERAL…
_FUNCTIONS = set(Parser.FUNCTIONS)  # COALESCE, COUNT, … when called


def _sql_spans(sql: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every keyword ("kw"), string or quoted name ("lit") and comment
    ("lit") in ``sql``, read by sqlglot's tokenizer; [] when it cannot tokenize the text."""
    try:
        tokens = Tokenizer().tokenize(sql)
    except TokenError:
        return []
    spans: list[tuple[int, int, str]] = []
    at = 0
    for i, t in enumerate(tokens):
        gap = sql[at:t.start]
        if gap.strip():  # between tokens there is only white space and comments
            lead = len(gap) - len(gap.lstrip())
            spans.append((at + lead, at + len(gap.rstrip()), "lit"))
        called = i + 1 < len(tokens) and tokens[i + 1].token_type == TokenType.L_PAREN
        if t.token_type in _LITERALS:
            spans.append((t.start, t.end + 1, "lit"))
        elif t.text[:1].isalpha() and (t.token_type in _KEYWORDS or (  # words, not operators
                t.token_type == TokenType.VAR and called and t.text.upper() in _FUNCTIONS)):
            spans.append((t.start, t.end + 1, "kw"))
        at = t.end + 1
    if sql[at:].strip():
        gap = sql[at:]
        spans.append((at + len(gap) - len(gap.lstrip()), at + len(gap.rstrip()), "lit"))
    return spans


def sql_block(sql: str, *, copy: bool = True) -> str:
    """SQL as escaped ``<pre>`` HTML with keywords and called functions bold (strings, quoted
    names and comments greyed, never bold), read by sqlglot's tokenizer, and, with ``copy``, a
    Copy button (clauses.js copies the text). Streamlit's ``st.code`` loads a syntax highlighter
    whose module took ~0.5 s to evaluate on the first paint of a page."""
    out, at = [], 0
    for start, end, kind in _sql_spans(sql):
        out.append(escape(sql[at:start]))
        text = escape(sql[start:end])
        out.append(f"<b>{text}</b>" if kind == "kw" else f'<span class="pq-sql-lit">{text}</span>')
        at = end
    out.append(escape(sql[at:]))
    return _pre("".join(out), copy, "Copy the SQL to the clipboard")


def text_block(text: str, *, copy: bool = True) -> str:
    """Plain text (e.g. a completion code) as an escaped ``<pre>`` with a Copy button."""
    return _pre(escape(text), copy, "Copy to the clipboard")


def _pre(inner: str, copy: bool, title: str) -> str:
    button = (f'<button type="button" class="pq-btn pq-secondary pq-copy" data-copy="pre" '
              f'title="{title}">Copy</button>') if copy else ""
    return f'<div class="pq-sql">{button}<pre>{inner}</pre></div>'


TABLE_ROWS = 200  # rows drawn in an output table; the rest are counted below it


def shape_text(rows: int, cols: int) -> str:
    """An output's size in words, singular where it is one: "4 rows × 1 column"."""
    return f"{counted(rows, 'row')} × {counted(cols, 'column')}"


def counted(n: int, noun: str, plural: str = "") -> str:
    """``n`` and ``noun``, plural unless one ("1 decision", "2 decisions"; ``plural`` for an
    irregular one: "queries"): participants read these, so no "decision(s)"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def output_table(columns: list[str], rows: list[tuple], *, max_rows: int = TABLE_ROWS,
                 labels: str = "sql", sql: str | None = None,
                 headers: list[str] | None = None) -> str:
    """A query output as an escaped, scrollable HTML table (header stays in view; NULL marked;
    headers as :func:`ui.headers.distinct_headers` shows them under ``labels``: a repeated
    one qualified by its table from ``sql``, else numbered; ``headers`` as given instead).

    Streamlit's ``st.dataframe`` loads a data-grid module (~0.1 s to evaluate on a new session)
    and converts to Arrow on every rerun; an output here is a few rows to a few hundred.
    """
    shown = headers if headers is not None else distinct_headers(columns, sql, labels)
    head = "".join(f"<th>{escape(h)}</th>" for h in shown)
    body = "".join(
        "<tr>" + "".join('<td class="pq-null">NULL</td>' if v is None else
                         f"<td>{escape(str(v))}</td>" for v in row) + "</tr>"
        for row in rows[:max_rows])
    more = (f'<p class="pq-caption">… {len(rows) - max_rows} more rows not shown</p>'
            if len(rows) > max_rows else "")
    empty = "" if rows else '<p class="pq-caption">(no rows)</p>'
    return (f'<div class="pq-table" data-scroll="table"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>{empty}{more}")
