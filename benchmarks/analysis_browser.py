"""The Analysis page's waits in real Chromium, beside a trivial Streamlit app of the same run.

Used by ``python -m benchmarks.analysis`` (its ``--browser`` rows). Each wait is measured in the
page, from the user's event (pointer or key) to the frame after the new state was painted: the
open tab's own content (a text only that tab draws) present, every Plotly chart (its SVG) and
shown data grid (its canvas) in it drawn, the script no longer running — and, where the action changes
what is shown (a widget, another study), the tab's visible text and chart labels different from
before.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from benchmarks.paint import TIMEOUT_MS, first_paint, new_page
from benchmarks.rerun import Rows

PASSWORD = "bench"
# each tab and a text only its own drawn content has
TABS = {"Completion": "Completion rate (coded cells)", "Questionnaires": "SUS mean",
        "Timings": "Facilitator markers, notes and recordings", "Workflows": "Store label",
        "Timeline & replay": "Distinct outputs", "Export": "Download export (zip)"}

# the open tab's panel, and whether its state is painted (see module docstring): its marker
# text, no status widget, every Plotly chart's SVG and every shown data grid's canvas drawn.
# textContent, not innerText: innerText lays the page out on every check (each frame and
# mutation), which slowed the page measured, the more the bigger its DOM (an HTML table)
PANEL_JS = """() => [...document.querySelectorAll('[role="tabpanel"]')]
                        .find((p) => !p.hidden && p.offsetParent !== null) || null"""
SIGNATURE_JS = f"""() => {{ const p = ({PANEL_JS})(); if (!p) return null;
  return p.textContent + '|' + [...p.querySelectorAll('.main-svg text')]
                               .map((t) => t.textContent).join(','); }}"""
READY_JS = f"""(marker) => {{ const p = ({PANEL_JS})();
  if (!p || !p.textContent.includes(marker)) return false;
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  return [...p.querySelectorAll('[data-testid="stPlotlyChart"]')]
           .every((c) => c.querySelector('.main-svg'))
    && [...p.querySelectorAll('[data-testid="stDataFrame"]')].filter((d) => d.offsetParent)
           .every((d) => [...d.querySelectorAll('canvas')].some((c) => c.width > 0)); }}"""
# armed before an action: the event's time, then the time after the frame that first shows
# the new state (READY_JS, and a signature unlike ``before`` when one is given) was painted
ARM_JS = f"""([marker, before]) => {{
  const w = window.__pqAn = {{ t0: null, shown: null }};
  for (const type of ["pointerdown", "mousedown", "keydown", "click"]) {{
    document.addEventListener(type, (e) => {{ if (w.t0 === null) w.t0 = e.timeStamp; }},
                              {{ capture: true, once: true }});
  }}
  let done = false;
  const check = () => {{
    if (done || w.t0 === null || !({READY_JS})(marker)) return;
    if (before !== null && ({SIGNATURE_JS})() === before) return;
    done = true; obs.disconnect(); clearInterval(tick);
    requestAnimationFrame(() => setTimeout(() => {{ w.shown = performance.now(); }}, 0));
  }};
  const obs = new MutationObserver(check);
  obs.observe(document.body, {{ subtree: true, childList: true, attributes: true,
                               characterData: true }});
  const tick = setInterval(check, 20);  // a state reached without a mutation after the event
}}"""


def _timed(page: Any, marker: str, action: Callable[[], None], changed: bool) -> float:
    """ms from the event ``action`` causes to the open tab painted with ``marker``."""
    before = page.evaluate(SIGNATURE_JS) if changed else None
    page.evaluate(ARM_JS, [marker, before])
    action()
    page.wait_for_function("() => window.__pqAn.shown !== null", timeout=TIMEOUT_MS)
    t = page.evaluate("() => window.__pqAn")
    return t["shown"] - t["t0"]


def _idle(page: Any) -> None:
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                           timeout=TIMEOUT_MS)
    page.wait_for_timeout(300)


def _ready(marker: str) -> Callable[[Any], None]:
    return lambda page: page.wait_for_function(READY_JS, arg=marker, timeout=TIMEOUT_MS)


# ms since navigation when read (Playwright's wait polls: up to ~100 ms late at these times)
FORM_JS = """() => document.querySelector('input[type="password"]') ? performance.now() : null"""


def unlock(browser: Any, url: str, typing_s: float = 0.0, form: list[float] | None = None
           ) -> tuple[Any, float]:
    """A researcher's first visit: the password (typed ``typing_s`` seconds after the form is
    shown: a person reading and typing, where 0 is a password manager), then Unlock → the
    Completion tab painted (ms); returns the page (its context holds the researcher cookie).
    ``form``, if given, receives ms from navigation to the password form drawn."""
    page = new_page(browser)
    page.goto(f"{url}/analysis")
    page.get_by_label("Researcher password").wait_for(timeout=TIMEOUT_MS)
    if form is not None:
        form.append(float(page.evaluate(FORM_JS) or 0.0))
    page.wait_for_timeout(typing_s * 1000)
    page.get_by_label("Researcher password").fill(PASSWORD)
    ms = _timed(page, TABS["Completion"],
                lambda: page.get_by_role("button", name="Unlock").click(), False)
    _idle(page)
    return page, ms


def first_loads(browser: Any, url: str, cookies: list[dict], reps: int, warm: bool = False
                ) -> list[float]:
    """A new session of an unlocked researcher → Completion painted (ms), with a cold HTTP
    cache or (``warm``) in a new tab after one visit."""
    return first_paint(browser, f"{url}/analysis", _ready(TABS["Completion"]), reps,
                       warm=warm, cookies=cookies)


def tab_switches(page: Any, reps: int) -> dict[str, list[float]]:
    """Click each tab in turn (then Completion again), ``reps`` rounds: ms per tab."""
    out: dict[str, list[float]] = {name: [] for name in TABS}
    order = [*list(TABS)[1:], "Completion"]
    for _ in range(reps):
        for name in order:
            tab = page.get_by_role("tab", name=name)
            out[name].append(_timed(page, TABS[name], tab.click, False))
            _idle(page)
    return out


def widget_changes(page: Any, reps: int) -> list[float]:
    """The Timings tab's "Per subtask" toggle → its chart redrawn, ``reps`` times (ms)."""
    page.get_by_role("tab", name="Timings").click()
    _ready(TABS["Timings"])(page)
    _idle(page)
    toggle = page.locator(".st-key-an_tim_sub label").first
    times = []
    for _ in range(reps):
        times.append(_timed(page, TABS["Timings"], toggle.click, True))
        _idle(page)
    page.get_by_role("tab", name="Completion").click()
    _ready(TABS["Completion"])(page)
    _idle(page)
    return times


def study_switches(page: Any, studies: list[str], reps: int) -> list[float]:
    """The sidebar's Study → another study's Completion tab painted, ``reps`` times (ms)."""
    times = []
    for i in range(reps):
        target = studies[(i + 1) % len(studies)]
        page.get_by_role("combobox", name="Study").click()
        option = page.get_by_role("option", name=target, exact=True)
        option.wait_for()
        times.append(_timed(page, TABS["Completion"], option.click, True))
        page.wait_for_function("t => document.querySelector('input[aria-label=\"Study\"]')"
                               ".value === t", arg=target)  # the study picked is shown
        _idle(page)
    return times


def fresh_unlocks(browser: Any, start: Callable[[str], Any], trivial_url: str, labels: list[str],
                  studies: list[str], reps: int, typing_s: float = 0.0
                  ) -> dict[str, list[float]]:
    """A fresh server per checkout and round: Unlock → Completion painted, then (after the page
    is idle) another study → painted, ``reps`` rounds, each round the trivial app's cold first
    paint first and the checkouts in a rotating order. ``start(label)`` is a context manager
    serving that checkout on a new server (its URL as ``.url``). Keys: each label's unlock, its
    difference to the trivial app of its round (``" gap"``), its switch (``" switch"``) and
    navigation → the password form drawn (``" form"``; the password typed ``typing_s`` later)."""
    out: dict[str, list[float]] = {"trivial": []}
    for i in range(reps):
        out["trivial"] += first_paint(browser, trivial_url, _trivial_ready, 1)
        for label in labels[i % len(labels):] + labels[:i % len(labels)]:
            with start(label) as server:
                page, ms = unlock(browser, server.url, typing_s,
                                  out.setdefault(f"{label} form", []))
                out.setdefault(label, []).append(ms)
                out.setdefault(f"{label} gap", []).append(ms - out["trivial"][-1])
                out.setdefault(f"{label} switch", []).extend(study_switches(page, studies, 1))
                page.context.close()
    return out


def interleaved_first_loads(browser: Any, trivial_url: str, servers: dict[str, tuple[str, list]],
                            reps: int, warm: bool = False) -> dict[str, list[float]]:
    """New sessions → first paint (ms), ``reps`` rounds, each round the trivial app and then
    every server of ``servers`` (label → (url, researcher cookies)) in turn, so all see the same
    load. Also, per server, each round's difference to the trivial app (key ``label + " gap"``)."""
    out: dict[str, list[float]] = {"trivial": []}
    for _ in range(reps):
        out["trivial"] += first_paint(browser, trivial_url, _trivial_ready, 1, warm=warm)
        for label, (url, cookies) in servers.items():
            ms = first_loads(browser, url, cookies, 1, warm=warm)
            out.setdefault(label, []).extend(ms)
            out.setdefault(f"{label} gap", []).append(ms[0] - out["trivial"][-1])
    return out


def browser_rows(urls: dict[str, str], trivial_url: str, studies: list[str], reps: int
                 ) -> list[tuple[str, list[float]]]:
    """Every Chromium row for the Analysis servers ``urls`` (a row label prefix → its URL) and
    the trivial app beside them: first loads interleaved round by round, then per server a fresh
    server's unlock, each tab, the Timings toggle and a study switch."""
    from playwright.sync_api import sync_playwright

    from tests.harness import CHROMIUM, CHROMIUM_ARGS

    rows = Rows()  # a failed row is reported and kept empty; the others go on
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        first_paint(browser, trivial_url, _trivial_ready, 1)  # untimed warm-up
        pages, servers = {}, {}
        for label, url in urls.items():
            pages[label], ms = unlock(browser, url)
            servers[label] = (url, pages[label].context.cookies())
            rows.add(f"{label}Analysis, fresh server: Unlock → Completion painted (data not "
                     "cached)", partial(list, [ms]))
        for kind, warm in (("cold", False), ("warm", True)):
            loads: dict[str, list[float]] = {}

            def measured(key: str, warm: bool = warm, loads: dict = loads) -> list[float]:
                if not loads:  # every row of this kind from one interleaved set of loads
                    loads.update(interleaved_first_loads(browser, trivial_url, servers, reps,
                                                         warm))
                return loads[key]
            rows.add(f"trivial app: new session → drawn ({kind} HTTP cache)",
                     partial(measured, "trivial"))
            for label in urls:
                rows.add(f"{label}Analysis: new session → Completion painted ({kind} HTTP "
                         "cache)", partial(measured, label))
                rows.add(f"{label}  the same minus the trivial app of its round",
                         partial(measured, f"{label} gap"))
        for label, page in pages.items():
            switches: dict[str, list[float]] = {}

            def switch_times(name: str, page: Any = page, switches: dict = switches
                             ) -> list[float]:  # every tab's row from one set of clicks
                if not switches:
                    switches.update(tab_switches(page, reps))
                return switches[name]
            for name in TABS:
                rows.add(f"{label}Analysis: switch to the {name} tab → painted",
                         partial(switch_times, name))
            rows.add(f"{label}Analysis: Timings 'Per subtask' toggle → chart redrawn",
                     partial(widget_changes, page, reps))
            rows.add(f"{label}Analysis: another study → its Completion tab painted",
                     partial(study_switches, page, studies, reps))
            page.context.close()
        browser.close()
    return rows


def _trivial_ready(page: Any) -> None:
    page.get_by_text("0 of 1").wait_for()
