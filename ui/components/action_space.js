// The Action Space: one Plotly.js figure that stays mounted across Streamlit reruns.
// Each new `data.figure` is applied with Plotly.react (only what changed is redrawn); lasso,
// box and click selections (mouse: drawn and tested here; touch: Plotly's) go back as the
// one-shot trigger "select" ({ids, gesture, seq}), and
// a glyph hovered for HOVER_MS as "hover" ({id, ts}) when data.hover is set. Plotly.js is the
// copy inside the plotly Python package, served by Streamlit (no CDN).
const PLOTLY_URL = new URL("../pleasqlarify_plotly.lib/plotly.min.js", import.meta.url).href;
const HOVER_MS = 600;

function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__pqPlotly) {
    window.__pqPlotly = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = PLOTLY_URL;
      script.async = true;
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => {
        window.__pqPlotly = null;
        reject(new Error(`Plotly.js could not be loaded from ${PLOTLY_URL}`));
      };
      document.head.appendChild(script);
    });
  }
  return window.__pqPlotly;
}

function candidateIds(points) {
  const ids = new Set();
  for (const p of points || []) {
    if (Array.isArray(p.customdata) && p.customdata.length) ids.add(Number(p.customdata[0]));
  }
  return [...ids].sort((a, b) => a - b);
}

const SVG = "http://www.w3.org/2000/svg";
const CLICK_PX = 4; // a drag shorter than this is a click

function inside(poly, x, y) {
  let hit = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i];
    const [xj, yj] = poly[j];
    if ((yi > y) !== (yj > y) && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) hit = !hit;
  }
  return hit;
}

function selectedIn(root, poly) {
  // candidate ids whose marker centre lies inside `poly` (plot-area px), as Plotly's lasso does
  const full = root._fullLayout;
  const xa = full && full.xaxis;
  const ya = full && full.yaxis;
  if (!xa || !ya) return [];
  const ids = new Set();
  for (const trace of root.data || []) {
    if (trace.name !== "candidates" && trace.name !== "invalid") continue;
    const xs = trace.x || [];
    const ys = trace.y || [];
    const custom = trace.customdata || [];
    for (let i = 0; i < xs.length; i++) {
      if (inside(poly, xa.l2p(xs[i]), ya.l2p(ys[i])) && Array.isArray(custom[i])) {
        ids.add(Number(custom[i][0]));
      }
    }
  }
  return [...ids].sort((a, b) => a - b);
}

function ownDrag(Plotly, root, state, ev) {
  // Lasso and box drawn and tested here, so the selection goes out on mouseup: Plotly's own
  // selection waits for a 100 ms throttle and restyles every trace before it reports.
  const drag = ev.target;
  const mode = root._fullLayout && root._fullLayout.dragmode;
  if (ev.button !== 0 || !drag.classList || !drag.classList.contains("nsewdrag")
      || (mode !== "lasso" && mode !== "select")) return;
  ev.preventDefault();
  ev.stopPropagation();
  const hovered = candidateIds(root._hoverdata).slice(0, 1); // what the tooltip shows
  if (Plotly.Fx && Plotly.Fx.unhover) Plotly.Fx.unhover(root);
  const rect = drag.getBoundingClientRect();
  const host = root.getBoundingClientRect();
  const at = (e) => [Math.min(Math.max(e.clientX - rect.left, 0), rect.width),
                     Math.min(Math.max(e.clientY - rect.top, 0), rect.height)];
  const start = at(ev);
  const path = [start];
  let moved = 0; // farthest from the start (a closed lasso ends where it began)
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "pq-lasso");
  Object.assign(svg.style, { left: `${rect.left - host.left}px`, top: `${rect.top - host.top}px`,
                             width: `${rect.width}px`, height: `${rect.height}px` });
  const line = document.createElementNS(SVG, "path");
  svg.appendChild(line);
  root.appendChild(svg);
  const shape = () => {
    if (mode === "lasso") return path;
    const [x0, y0] = start;
    const [x1, y1] = path[path.length - 1];
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]];
  };
  const move = (e) => {
    e.stopPropagation();
    const p = at(e);
    path.push(p);
    moved = Math.max(moved, Math.hypot(p[0] - start[0], p[1] - start[1]));
    line.setAttribute("d", `M${shape().map((p) => p.join(",")).join("L")}Z`);
  };
  const up = (e) => {
    window.removeEventListener("mousemove", move, true);
    window.removeEventListener("mouseup", up, true);
    e.stopPropagation();
    svg.remove();
    path.push(at(e));
    const ids = moved < CLICK_PX ? hovered : selectedIn(root, shape());
    const gesture = moved < CLICK_PX ? "click" : mode === "lasso" ? "lasso" : "box";
    if (ids.length) state.send("select", { ids, gesture, seq: ++state.seq });
  };
  window.addEventListener("mousemove", move, true);
  window.addEventListener("mouseup", up, true);
}

function bind(Plotly, root, state) {
  if (state.bound) return;
  state.bound = true;
  const send = (name, value) => state.send && state.send(name, value);
  const clear = () => Plotly.relayout(root, { selections: [] }).catch(() => {});
  root.addEventListener("mousedown", (ev) => ownDrag(Plotly, root, state, ev), true);
  // touch gestures still go through Plotly's own selection
  root.on("plotly_selected", (ev) => {
    if (!ev || !(ev.lassoPoints || ev.range)) return; // clicks are handled below
    const ids = candidateIds(ev.points);
    clear();
    if (ids.length) send("select", { ids, gesture: ev.lassoPoints ? "lasso" : "box",
                                     seq: ++state.seq });
  });
  root.on("plotly_click", (ev) => {
    const ids = candidateIds(ev && ev.points).slice(0, 1);
    if (ids.length) send("select", { ids, gesture: "click", seq: ++state.seq });
  });
  root.on("plotly_hover", (ev) => {
    const ids = candidateIds(ev && ev.points);
    clearTimeout(state.hoverTimer);
    if (!ids.length || !state.hover) return;
    state.hoverTimer = setTimeout(() => {
      if (state.lastHover === ids[0]) return;
      state.lastHover = ids[0];
      send("hover", { id: ids[0], ts: Date.now() });
    }, HOVER_MS);
  });
  root.on("plotly_unhover", () => {
    clearTimeout(state.hoverTimer);
    state.lastHover = null;
  });
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let root = parentElement.querySelector(":scope > .pq-space");
  if (!root) {
    root = document.createElement("div");
    root.className = "pq-space";
    root.setAttribute("data-testid", "pq-action-space");
    parentElement.appendChild(root);
  }
  const state = root.__pq || (root.__pq = { seq: 0, bound: false, queue: Promise.resolve() });
  state.send = setTriggerValue;
  state.hover = Boolean(data && data.hover);
  const figure = data && data.figure;
  if (figure) {
    // one draw at a time, in order; Plotly.react diffs against the figure on screen
    state.queue = state.queue.then(() => loadPlotly()).then((Plotly) => {
      const layout = { ...figure.layout, selections: [] };
      return Plotly.react(root, figure.data, layout, data.config || {}).then(() => {
        bind(Plotly, root, state);
        root.setAttribute("data-revision", String(data.revision ?? ""));
      });
    }).catch((err) => {
      root.textContent = String(err && err.message ? err.message : err);
    });
  }
  // keep the figure between data updates; drop it only once Streamlit has removed the element
  return () => setTimeout(() => {
    if (!root.isConnected && window.Plotly) window.Plotly.purge(root);
  }, 0);
}
