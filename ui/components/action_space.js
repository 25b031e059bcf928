// The Action Space: one Plotly.js figure that stays mounted across Streamlit reruns.
// Each new `data.figure` is applied with Plotly.react (only what changed is redrawn); lasso,
// box and click selections go back as the one-shot trigger "select" ({ids, gesture, seq}), and
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

function bind(Plotly, root, state) {
  if (state.bound) return;
  state.bound = true;
  const send = (name, value) => state.send && state.send(name, value);
  const clear = () => Plotly.relayout(root, { selections: [] }).catch(() => {});
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
