"""Read back the HTML tables the Analysis page draws (study.analysis.figures), as a browser
would: the header row, each row's header cell, each cell's text (entities decoded) and class."""

from __future__ import annotations

from html.parser import HTMLParser

import pandas as pd


class _Tables(HTMLParser):
    """Collects every table's rows as lists of (tag, text, class) cells."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[tuple[str, str, str]]]] = []
        self._cell: list[str] | None = None
        self._meta = ("", "")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Open a table, a row or a cell."""
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell, self._meta = [], (tag, dict(attrs).get("class") or "")

    def handle_endtag(self, tag: str) -> None:
        """Close a cell: its whole text goes into the current row."""
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append((self._meta[0], "".join(self._cell), self._meta[1]))
            self._cell = None

    def handle_data(self, data: str) -> None:
        """Text inside a cell."""
        if self._cell is not None:
            self._cell.append(data)


def read_tables(body: str) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """Each table in ``body`` as (texts, classes): the first column (the row headers) as the
    index, the header row as the columns."""
    parser = _Tables()
    parser.feed(body)
    out = []
    for head, *rows in parser.tables:
        columns = [text for _, text, _ in head]
        index = pd.Index([row[0][1] for row in rows], name=columns[0])
        texts, classes = (pd.DataFrame([[c[k] for c in row[1:]] for row in rows],
                                       columns=columns[1:], index=index) for k in (1, 2))
        out.append((texts, classes))
    return out
