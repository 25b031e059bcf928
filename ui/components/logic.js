// The pure logic of the two components, in one module both import (./logic.js, served from the
// same asset folder) and the Node unit tests load (tests/js/): hit-testing and geometry of the
// Action Space, and the page-wide hub of the optimistic Yes/No with its answer queue.
// Nothing here touches the DOM.

export const QUEUE_MAX = 8; // presses kept while an answer is on its way
export const SHORTCUTS = { b: "dv-back", arrowup: "dv-up", arrowdown: "dv-down" }; // Streamlit buttons

export const f1 = (v) => Math.round(v * 10) / 10;

// --- Action Space geometry and hit-testing ------------------------------------------------

export function inside(poly, x, y) {
  // whether (x, y) lies inside the polygon `poly` ([[x, y], …]; even-odd rule)
  let hit = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i];
    const [xj, yj] = poly[j];
    if ((yi > y) !== (yj > y) && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) hit = !hit;
  }
  return hit;
}

export function frameOf(width, space, view = IDENTITY) {
  // data square [0, 1]² (y up) → px inside the margins of `width`, through the zoom `view`
  const m = space.margin;
  const w = width - 2 * m;
  const h = space.height - 2 * m;
  return {
    px: (x) => m + (view.x0 + x * view.k) * w,
    py: (y) => m + (1 - (view.y0 + y * view.k)) * h,
    m, w, h,
  };
}

export function boxCorners(start, end) {
  // the rectangle spanned by two drag points, as a polygon
  const [x0, y0] = start;
  const [x1, y1] = end;
  return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]];
}

export function idsInside(glyphs, poly, fr) {
  // ids of the glyphs whose centre lies inside `poly` (svg px), ascending
  return glyphs.filter((g) => inside(poly, fr.px(g.x), fr.py(g.y)))
    .map((g) => g.id).sort((a, b) => a - b);
}

export function starPoints(cx, cy, outer = 5, inner = 2.2) {
  // the five-pointed star marking a repaired candidate, as SVG polygon points
  const pts = [];
  for (let k = 0; k < 10; k++) {
    const r = k % 2 ? inner : outer;
    const a = -Math.PI / 2 + (k * Math.PI) / 5;
    pts.push(`${f1(cx + r * Math.cos(a))},${f1(cy + r * Math.sin(a))}`);
  }
  return pts.join(" ");
}

export function tipPosition(x, y, tw, th, width, height, gap = 14) {
  // where a tooltip of tw × th px goes beside the point (x, y): right of it unless it would
  // leave the chart, never past the chart's left or right edge, vertically centred and kept
  // inside the chart's height
  const left = Math.max(0, Math.min(x + gap + tw > width ? x - gap - tw : x + gap, width - tw));
  const top = Math.min(Math.max(0, y - th / 2), Math.max(0, height - th));
  return { left, top };
}

const LABEL_STEPS = [[0, -30], [0, 30], [-30, 0], [30, 0], [-24, -24], [24, -24], [-24, 24],
  [24, 24], [0, -48], [0, 48], [-48, 0], [48, 0]];

export function labelPosition(x, y, fr, avoid = [], size = 9) {
  // where a cluster's number goes near its glyphs' centre (x, y) px: 30 px above it, else
  // below, beside, diagonal to it or further out — the first place inside the plot that
  // overlaps none of `avoid` ({left, top, right, bottom} px: the toolbar, the numbers placed
  // before); else above it, kept inside the plot and below the first of `avoid` (the toolbar)
  const clear = (cx, cy) => cx - size >= fr.m && cx + size <= fr.m + fr.w
    && cy - size >= fr.m && cy + size <= fr.m + fr.h
    && !avoid.some((r) => cx + size > r.left && cx - size < r.right
                          && cy + size > r.top && cy - size < r.bottom);
  for (const [dx, dy] of LABEL_STEPS) {
    if (clear(x + dx, y + dy)) return { x: x + dx, y: y + dy };
  }
  const top = avoid.length ? Math.max(fr.m, avoid[0].bottom) : fr.m;
  return { x, y: Math.max(y - 30, top + size) };
}

export function labelBox(p, size = 9) {
  // the square a placed number covers (what the next numbers keep clear of)
  return { left: p.x - size, top: p.y - size, right: p.x + size, bottom: p.y + size };
}

// --- zoom and pan --------------------------------------------------------------------------

// A view maps data [0, 1]² to the unit square shown: u = x0 + x·k (k ≥ 1 zooms in).
export const IDENTITY = Object.freeze({ k: 1, x0: 0, y0: 0 });
export const MAX_ZOOM = 20;

function clampView(k, x0, y0) {
  // keep at least part of the data on screen: the shown square never leaves [0, k]²
  const lo = 1 - k;
  return { k, x0: Math.min(0, Math.max(lo, x0)), y0: Math.min(0, Math.max(lo, y0)) };
}

export function zoomAt(view, factor, u, v) {
  // zoom by `factor` keeping the point at unit coordinates (u, v) (y up) where it is
  const k = Math.min(MAX_ZOOM, Math.max(1, view.k * factor));
  const s = k / view.k;
  return clampView(k, u - (u - view.x0) * s, v - (v - view.y0) * s);
}

export function panBy(view, du, dv) {
  // move the view by (du, dv) in unit coordinates (y up)
  return clampView(view.k, view.x0 + du, view.y0 + dv);
}

export function isIdentity(view) {
  return view.k === 1 && view.x0 === 0 && view.y0 === 0;
}

// --- the optimistic Yes/No: one hub per page, shared by both components -----------------------

export function hub(scope = globalThis) {
  // the page-wide hub (made by whichever component runs first)
  return scope.__pqHub || (scope.__pqHub = {
    panels: new Map(), next: null, pending: null, queue: [], seq: 0, keys: false, busy: null,
    shown: null, order: 0, applied: 0, page: Math.random().toString(36).slice(2, 10) });
}

export const SELECT_HOLD_MS = 5000; // no hover is sent this long after a selection not yet drawn

export function mayHover(selecting, selectedAt, now) {
  // whether a hover may be sent now: not while a selection the server has not drawn yet is on
  // its way (``selecting``: the revision it was made on, else null), for at most SELECT_HOLD_MS.
  // Sent then, it could reach the server in the same busy run and, the chart's newer trigger,
  // replace the selection there (Streamlit keeps a component's newest trigger); a hover is a
  // sample, so that one is left out
  return selecting === null || now - selectedAt >= SELECT_HOLD_MS;
}

export function unacknowledged(h, presses, keep = 16) {
  // the presses the server has not applied yet (it acknowledges the last one, ``h.applied``),
  // at most ``keep`` of them
  return presses.filter((p) => p.page === h.page && p.at > (h.applied || 0)).slice(-keep);
}

export function stamped(h, value) {
  // ``value`` with the page-wide order of the press (``at``) and this page load's id: two
  // presses Streamlit delivers in one run (the second sent while the server was still busy
  // with the run before) are applied in the order they were made (ui/panels.py)
  return { ...value, at: ++h.order, page: h.page };
}

export function idle(h) {
  // nothing on its way: an answer may be sent now
  return !h.pending && !h.busy && !h.queue.length;
}

export function forget(h) {
  // another gesture: what was queued no longer follows what is on the screen, and the
  // speculated states are about to be stale
  h.queue.length = 0;
  h.next = null;
}

export function enqueue(h, item) {
  // keep a press for later (at most QUEUE_MAX); whether it was kept
  if (h.queue.length >= QUEUE_MAX) return false;
  h.queue.push(item);
  return true;
}

export function speculated(h, yes, key) {
  // the panels' data for answering `yes` to the variable `key`, when the carrier has it for the
  // state on the screen; the carrier is used up either way (the next render brings new ones)
  const next = h.next;
  h.next = null;
  return next && next.for === h.shown && next.key === key ? next[yes ? "y" : "n"] : null;
}

export function keyAction(ev, h) {
  // what a key press means: "answer" (y/n), "queue" (Back/Previous/Next while an answer is on
  // its way), or null (not ours: modifiers, repeats, IME composition, Streamlit's own handling)
  if (ev.defaultPrevented || ev.repeat || ev.isComposing || ev.ctrlKey || ev.metaKey
      || ev.altKey) return null;
  const k = (ev.key || "").toLowerCase();
  if (k === "y" || k === "n") return "answer";
  return SHORTCUTS[k] && !idle(h) ? "queue" : null;
}
