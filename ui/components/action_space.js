// The Action Space: one SVG that stays mounted across Streamlit reruns and is drawn from
// `data.space` (ui/action_space.py:space_spec). Each layer (cells, faded dots, glyphs, cluster
// labels) is rebuilt only when its part of the spec changed, so a decision costs a few DOM
// updates. Lasso, box and click selections go back as the one-shot trigger "select"
// ({ids, gesture, seq}); a glyph hovered for HOVER_MS as "hover" ({id, ts}) when data.hover
// is set. No chart library: Plotly.react redrew the whole figure (70 ms at N = 50, 220 ms at
// N = 200) where this changes what changed. `data.summary` is the line over the chart. With
// `data.panel` it registers in the page-wide hub of clauses.js, which shows a speculated state
// in it on a Yes/No before the rerun (ui/optimistic.py). The wheel zooms at the pointer, the
// Pan tool drags the view, Reset returns to the whole space (a new task resets it too); SVG and
// PNG download the chart as drawn, styles inlined, for papers.

import {
  boxCorners, f1, forget, frameOf, hub, IDENTITY, idsInside, isIdentity, labelBox, labelPosition,
  mayHover, panBy, starPoints, tipPosition, zoomAt,
} from "./logic.js";

const SVG = "http://www.w3.org/2000/svg";
const HOVER_MS = 600;
const CLICK_PX = 4; // a drag shorter than this is a click
const LAYERS = ["cells", "dead", "glyphs", "labels"];
const WHEEL_ZOOM = 0.002; // zoom factor per wheel pixel: exp(-deltaY · this)
const EXPORT_STYLE = ["fill", "fill-opacity", "stroke", "stroke-width", "stroke-opacity",
  "stroke-dasharray", "opacity", "font-family", "font-size", "font-weight", "text-anchor",
  "dominant-baseline", "paint-order"]; // computed styles written into a downloaded SVG
let charts = 0; // ids of the clip paths, one per chart on the page

function frame(state) {
  // data square [0, 1]² (y up) → px inside the margins of the current width and zoom
  return frameOf(state.width, state.space, state.view);
}

function drawCells(space, fr) {
  return space.cells.map((c) => {
    let d = "";
    for (const flat of c.polys) {
      for (let i = 0; i < flat.length; i += 2) {
        d += `${i ? "L" : "M"}${f1(fr.px(flat[i]))},${f1(fr.py(flat[i + 1]))}`;
      }
      d += "Z";
    }
    const tone = c.red ? "red" : "blue";
    // "contains" is hatched as well as red, so it reads without colour (and in greyscale)
    const hatch = c.red ? `<path class="pq-hatch" d="${d}" fill="url(#pq-hatch)"/>` : "";
    return `<path class="pq-cell" data-cluster="${c.cluster}" data-tone="${tone}" d="${d}" fill="${c.fill}"/>${hatch}`;
  }).join("");
}

function drawDead(space, fr) {
  const colour = space.colours.faded;
  return space.dead.map(([x, y]) =>
    `<circle cx="${f1(fr.px(x))}" cy="${f1(fr.py(y))}" r="2.5" fill="${colour}"/>`).join("");
}

function glyphMarkup(g, colours) {
  if (!g.valid) {
    return `<path d="M-6,-6L6,6M-6,6L6,-6" stroke="${g.colour}" stroke-width="3"/>`
      + '<rect class="pq-hit" x="-7" y="-7" width="14" height="14"/>';
  }
  const { w, h } = g;
  const header = Math.min(3, h / 2);
  const hit = Math.max(w, h, 12);
  let out = `<rect x="${-(w + 2) / 2}" y="${-(h + 2) / 2}" width="${w + 2}" height="${h + 2}" fill="#fff"/>`
    + `<rect class="pq-body${g.contains ? " pq-contains" : ""}" x="${-w / 2}" y="${-h / 2}" width="${w}" height="${h}" fill="${g.colour}"/>`
    + `<rect x="${-w / 2}" y="${-h / 2}" width="${w}" height="${header}" fill="${colours.header}"/>`;
  if (g.new) {
    out += `<polygon class="pq-new" points="${starPoints(w / 2 + 4, -h / 2 - 4)}" fill="${colours.new}"/>`;
  }
  return out + `<rect class="pq-hit" x="${-hit / 2}" y="${-hit / 2}" width="${hit}" height="${hit}"/>`;
}

function drawGlyphs(space, fr) {
  return space.glyphs.map((g) =>
    `<g class="pq-glyph" data-id="${g.id}" data-cluster="${g.cluster}"`
    + ` transform="translate(${f1(fr.px(g.x))},${f1(fr.py(g.y))})">${glyphMarkup(g, space.colours)}</g>`,
  ).join("");
}

function drawLabels(space, fr) {
  // a cluster's number above its glyphs, moved where the toolbar or a number placed before
  // it would cover it (after a repair, clusters crowd together and their numbers overlapped)
  const avoid = fr.avoid ? [fr.avoid] : [];
  return space.labels.map((l) => {
    const p = labelPosition(fr.px(l.x), fr.py(l.y), fr, avoid);
    avoid.push(labelBox(p));
    return `<text class="pq-label" x="${f1(p.x)}" y="${f1(p.y)}">${l.text}</text>`;
  }).join("");
}

function toolbarBox(state) {
  // the toolbar's rectangle in the chart's px (null before it is laid out)
  const b = state.bar;
  if (!b || !b.offsetWidth) return null;
  return { left: b.offsetLeft, top: b.offsetTop, right: b.offsetLeft + b.offsetWidth,
           bottom: b.offsetTop + b.offsetHeight };
}

const DRAW = { cells: drawCells, dead: drawDead, glyphs: drawGlyphs, labels: drawLabels };

function render(state) {
  // rebuild each layer whose spec (or the width) changed; true when anything was redrawn
  const { space, width } = state;
  if (!space || width <= 0) return false;
  const fr = frame(state);
  fr.avoid = toolbarBox(state);
  state.plot.setAttribute("x", fr.m);
  state.plot.setAttribute("y", fr.m);
  state.plot.setAttribute("width", Math.max(0, fr.w));
  state.plot.setAttribute("height", Math.max(0, fr.h));
  for (const attr of ["x", "y", "width", "height"]) {
    state.clip.setAttribute(attr, state.plot.getAttribute(attr));
  }
  state.svg.setAttribute("height", space.height);
  const view = `${state.view.k}|${state.view.x0}|${state.view.y0}`;
  const bar = JSON.stringify(fr.avoid); // only the numbers are placed against the toolbar
  let drawn = false;
  for (const name of LAYERS) {
    const sig = `${width}|${view}|${name === "labels" ? bar : ""}|${JSON.stringify(space[name])}`;
    if (state.sigs[name] === sig) continue;
    state.sigs[name] = sig;
    state.layers[name].innerHTML = DRAW[name](space, fr);
    drawn = true;
  }
  state.tips = new Map(space.glyphs.map((g) => [g.id, g]));
  state.svg.setAttribute("aria-label", `Action Space: ${space.glyphs.length} queries remain`);
  return drawn;
}

function glyphAt(target) {
  const g = target && target.closest ? target.closest(".pq-glyph") : null;
  return g ? Number(g.dataset.id) : null;
}

function showTip(state, id) {
  const g = state.tips.get(id);
  if (!g) return hideTip(state);
  const fr = frame(state);
  state.tip.innerHTML = g.tip;
  state.tip.hidden = false;
  const { left, top } = tipPosition(fr.px(g.x), fr.py(g.y), state.tip.offsetWidth,
                                    state.tip.offsetHeight, state.width, state.space.height);
  state.tip.style.left = `${left}px`;
  state.tip.style.top = `${top}px`;
}

function hideTip(state) {
  state.tip.hidden = true;
  state.hovered = null;
  clearTimeout(state.hoverTimer);
}

function hover(state, id) {
  if (id === state.hovered) return;
  state.hovered = id;
  clearTimeout(state.hoverTimer);
  if (id === null) return hideTip(state);
  showTip(state, id);
  if (!state.hover) return;
  state.hoverTimer = setTimeout(() => {
    if (!mayHover(state.selecting, state.selectedAt, performance.now())) return;
    if (state.hovered === id && state.send) state.send("hover", { id, ts: Date.now() });
  }, HOVER_MS);
}

function selectedIn(state, poly) {
  // ids of the glyphs whose centre lies inside `poly` (svg px) and in the plot (zoomed out of
  // view they are not drawn, so they cannot be chosen)
  const fr = frame(state);
  const shown = state.space.glyphs.filter((g) => {
    const x = fr.px(g.x);
    const y = fr.py(g.y);
    return x >= fr.m && x <= fr.m + fr.w && y >= fr.m && y <= fr.m + fr.h;
  });
  return idsInside(shown, poly, fr);
}

function bindDrag(state) {
  const { svg } = state;
  const at = (e) => {
    const r = svg.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  };
  svg.addEventListener("pointerdown", (ev) => {
    // one gesture at a time, by its own pointer (a second finger neither starts nor joins one)
    if (ev.button !== 0 || !state.space || state.dragging || !ev.isPrimary) return;
    ev.preventDefault();
    state.dragging = true;
    const id = ev.pointerId;
    const start = at(ev);
    if (state.mode === "pan") return panDrag(state, ev, start, at);
    const clicked = glyphAt(ev.target);
    const path = [start];
    let moved = 0;
    const mode = state.mode;
    const shape = () => (mode === "lasso" ? path : boxCorners(start, path[path.length - 1]));
    svg.setPointerCapture(ev.pointerId);
    hideTip(state);
    const move = (e) => {
      if (e.pointerId !== id) return;
      const p = at(e);
      path.push(p);
      moved = Math.max(moved, Math.hypot(p[0] - start[0], p[1] - start[1]));
      if (moved >= CLICK_PX) {
        state.outline.setAttribute("d", `M${shape().map((q) => q.map(f1).join(",")).join("L")}Z`);
      }
    };
    const up = (e) => {
      if (e.pointerId !== id) return;
      svg.removeEventListener("pointermove", move);
      svg.removeEventListener("pointerup", up);
      svg.removeEventListener("pointercancel", up);
      svg.removeEventListener("lostpointercapture", up);
      state.dragging = false;
      state.outline.setAttribute("d", "");
      if (e.type !== "pointerup") return; // cancelled, or capture lost: no selection
      path.push(at(e));
      const click = moved < CLICK_PX;
      const ids = click ? (clicked === null ? [] : [clicked]) : selectedIn(state, shape());
      const gesture = click ? "click" : mode === "lasso" ? "lasso" : "box";
      if (ids.length && state.send) {
        forget(hub());  // another gesture: presses queued behind an answer no longer apply
        state.send("select", { ids, gesture, seq: ++state.seq });
        state.selecting = state.revision;  // until a rerun draws another revision
        state.selectedAt = performance.now();
      }
    };
    svg.addEventListener("pointermove", move);
    svg.addEventListener("pointerup", up);
    svg.addEventListener("pointercancel", up);
    svg.addEventListener("lostpointercapture", up);
  });
  svg.addEventListener("pointermove", (ev) => {
    if (ev.buttons) return;
    hover(state, glyphAt(ev.target));
  });
  svg.addEventListener("pointerleave", () => hover(state, null));
}

function unit(state, [x, y]) {
  // svg px → unit coordinates of the plot (y up)
  const fr = frame(state);
  return [(x - fr.m) / fr.w, 1 - (y - fr.m) / fr.h];
}

function setView(state, view) {
  // show the space through `view` (redrawing what moved) and keep Reset's state in step
  state.view = view;
  state.reset.disabled = isIdentity(view);
  state.root.dataset.zoom = String(Math.round(view.k * 100) / 100);
  hideTip(state);
  if (state.space && render(state)) stamp(state);
}

function panDrag(state, ev, start, at) {
  // the Pan tool: the view follows the pointer until it is released
  const { svg } = state;
  const id = ev.pointerId;
  const from = state.view;
  const [u0, v0] = unit(state, start);
  svg.setPointerCapture(id);
  const move = (e) => {
    if (e.pointerId !== id) return;
    const [u, v] = unit({ ...state, view: from }, at(e));
    setView(state, panBy(from, u - u0, v - v0));
  };
  const up = (e) => {
    if (e.pointerId !== id) return;
    for (const type of ["pointermove", "pointerup", "pointercancel", "lostpointercapture"]) {
      svg.removeEventListener(type, type === "pointermove" ? move : up);
    }
    state.dragging = false;
  };
  svg.addEventListener("pointermove", move);
  for (const type of ["pointerup", "pointercancel", "lostpointercapture"]) {
    svg.addEventListener(type, up);
  }
}

function bindWheel(state) {
  // the wheel zooms at the pointer (the page does not scroll under the chart)
  state.svg.addEventListener("wheel", (ev) => {
    if (!state.space || state.dragging || ev.ctrlKey) return;
    ev.preventDefault();
    const r = state.svg.getBoundingClientRect();
    const [u, v] = unit(state, [ev.clientX - r.left, ev.clientY - r.top]);
    setView(state, zoomAt(state.view, Math.exp(-ev.deltaY * WHEEL_ZOOM), u, v));
  }, { passive: false });
}

function exportMarkup(state) {
  // the chart as a standalone SVG document: computed styles inlined, no lasso, no hit areas
  const clone = state.svg.cloneNode(true);
  const source = [...state.svg.querySelectorAll("*")];
  const copies = [...clone.querySelectorAll("*")];
  source.forEach((el, i) => {
    const style = getComputedStyle(el);
    copies[i].setAttribute("style", EXPORT_STYLE.map((k) => `${k}:${style.getPropertyValue(k)}`)
      .join(";"));
  });
  for (const el of clone.querySelectorAll(".pq-hit, .pq-lasso")) el.remove();
  clone.setAttribute("xmlns", SVG);
  clone.setAttribute("width", String(state.width));
  clone.setAttribute("height", String(state.space.height));
  clone.setAttribute("viewBox", `0 0 ${state.width} ${state.space.height}`);
  return new XMLSerializer().serializeToString(clone);
}

function save(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

function download(state, kind) {
  // save the chart as drawn: SVG as it is, PNG rendered at twice the size
  if (!state.space || !state.width) return;
  const name = `action-space-${state.space.task || "chart"}`;
  const svgBlob = new Blob([exportMarkup(state)], { type: "image/svg+xml" });
  if (kind === "svg") return save(svgBlob, `${name}.svg`);
  const img = new Image();
  const url = URL.createObjectURL(svgBlob);
  img.onload = () => {
    const canvas = document.createElement("canvas");
    canvas.width = 2 * state.width;
    canvas.height = 2 * state.space.height;
    const ctx = canvas.getContext("2d");
    ctx.scale(2, 2);
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, state.width, state.space.height);
    ctx.drawImage(img, 0, 0);
    URL.revokeObjectURL(url);
    canvas.toBlob((png) => png && save(png, `${name}.png`), "image/png");
  };
  img.src = url;
}

function toolbar(state) {
  const bar = document.createElement("div");
  bar.className = "pq-tools";
  bar.setAttribute("role", "toolbar");
  bar.setAttribute("aria-label", "Selection tool");
  const tips = { lasso: "Drag a free-hand lasso around glyphs", select: "Drag a box around glyphs",
                 pan: "Drag to move the view (the wheel zooms at the pointer)" };
  for (const [mode, label] of [["lasso", "Lasso"], ["select", "Box"], ["pan", "Pan"]]) {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.mode = mode;
    b.textContent = label;
    b.title = tips[mode];
    b.addEventListener("click", () => setMode(state, mode));
    bar.appendChild(b);
  }
  const action = (name, label, title, run) => {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.action = name;
    b.textContent = label;
    b.title = title;
    b.addEventListener("click", run);
    bar.appendChild(b);
    return b;
  };
  state.reset = action("reset", "Reset", "Show the whole space again",
                       () => setView(state, IDENTITY));
  state.reset.disabled = true;
  action("svg", "SVG", "Download the chart as an SVG image", () => download(state, "svg"));
  action("png", "PNG", "Download the chart as a PNG image", () => download(state, "png"));
  return bar;
}

function setMode(state, mode) {
  state.mode = mode;
  for (const b of state.bar.querySelectorAll("button[data-mode]")) {
    b.setAttribute("aria-pressed", String(b.dataset.mode === mode));
  }
  state.svg.dataset.mode = mode;
}

function mount(parentElement) {
  const root = document.createElement("div");
  root.className = "pq-space";
  root.setAttribute("data-testid", "pq-action-space");
  const summary = document.createElement("div");  // over the chart, outside its frame
  summary.className = "pq-summary";
  // its box inline too: the stylesheet may apply a few frames after the first draw (Streamlit
  // links it), and the chart under the line then moved down by its margin (12 px)
  summary.style.lineHeight = "1.6";
  summary.style.marginBottom = "0.75rem";
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "pq-svg");
  svg.setAttribute("role", "img");
  svg.setAttribute("width", "100%");
  const plot = document.createElementNS(SVG, "rect");
  plot.setAttribute("class", "pq-plot");
  // the hatch of "contains" cells: colour is never the only cue (WCAG 1.4.1)
  const defs = document.createElementNS(SVG, "defs");
  defs.innerHTML = '<pattern id="pq-hatch" width="7" height="7" patternUnits="userSpaceOnUse"'
    + ' patternTransform="rotate(45)"><rect width="2.2" height="7" fill="rgba(40,10,10,0.32)"/>'
    + "</pattern>";
  svg.append(defs, plot);
  const clipPath = document.createElementNS(SVG, "clipPath");  // zoomed glyphs stay in the plot
  clipPath.id = `pq-clip-${++charts}`;
  const clip = document.createElementNS(SVG, "rect");
  clipPath.appendChild(clip);
  svg.appendChild(clipPath);
  const content = document.createElementNS(SVG, "g");
  content.setAttribute("clip-path", `url(#${clipPath.id})`);
  svg.appendChild(content);
  const layers = {};
  for (const name of LAYERS) {
    layers[name] = document.createElementNS(SVG, "g");
    layers[name].setAttribute("class", `pq-${name}`);
    content.appendChild(layers[name]);
  }
  const outline = document.createElementNS(SVG, "path");
  outline.setAttribute("class", "pq-lasso");
  svg.appendChild(outline);
  const tip = document.createElement("div");
  tip.className = "pq-tip";
  tip.hidden = true;
  root.append(svg, tip);
  parentElement.append(summary, root);
  const state = { root, summary, svg, plot, clip, layers, outline, tip, sigs: {}, tips: new Map(),
                  seq: 0, width: 0, space: null, mode: "lasso", draws: 0, hovered: null,
                  selecting: null, selectedAt: 0, revision: null,
                  dragging: false, view: IDENTITY };
  state.bar = toolbar(state);
  root.appendChild(state.bar);
  bindDrag(state);
  bindWheel(state);
  const redraw = () => {
    const width = root.clientWidth;
    // the toolbar too: until the component's CSS applies it sits in the flow, full width,
    // and the cluster numbers placed clear of it are placed again once it is in its corner
    const bar = JSON.stringify(toolbarBox(state));
    if (width === state.width && bar === state.barBox) return;
    state.width = width;
    state.barBox = bar;
    if (render(state)) stamp(state);
  };
  state.observer = new ResizeObserver(redraw);
  state.observer.observe(root);
  state.observer.observe(state.bar);
  root.__pq = state;
  return state;
}

function stamp(state) {
  state.draws += 1;
  state.root.dataset.draws = String(state.draws);
  state.root.setAttribute("data-revision", state.revision);
}

function show(state, data) {
  // draw the state `data` describes (a server render or a speculated one)
  const space = data && data.space;
  if (!space) return;
  const summary = String(data.summary ?? "");
  if (summary !== state.summaryHtml) {
    state.summary.innerHTML = summary;
    state.summaryHtml = summary;
  }
  if (!state.space || state.space.task !== space.task) {  // a new task: its own tool and view
    setMode(state, space.dragmode || "lasso");
    state.view = IDENTITY;
    state.reset.disabled = true;
  }
  state.space = space;
  state.revision = String(data.revision ?? "");
  if (!state.width) state.width = state.root.clientWidth;
  if (render(state)) stamp(state);
  else if (state.width > 0) state.root.setAttribute("data-revision", state.revision);
  // (width 0: not laid out yet; the ResizeObserver draws and stamps it once it is)
  if (state.hovered !== null) {  // the tooltip shows this state (cluster numbers change)
    if (state.tips.has(state.hovered)) showTip(state, state.hovered);
    else hideTip(state);
  }
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const found = parentElement.querySelector(":scope > .pq-space");
  const state = found && found.__pq ? found.__pq : mount(parentElement);
  state.send = setTriggerValue;
  state.hover = Boolean(data && data.hover);
  if (data && data.revision !== undefined) {
    state.revision = data.revision;
    if (state.selecting !== null && state.selecting !== data.revision) state.selecting = null;
  }
  const h = hub();
  let held = false;
  if (data && data.panel) {
    const entry = h.panels.get(data.panel);
    if (!entry || entry.root !== state.root) {
      const root = state.root;
      h.panels.set(data.panel, { root, latest: data, alive: () => root.isConnected,
                                 show: (d) => show(state, d) });
    } else {
      entry.latest = data;
    }
    held = Boolean(h.pending);  // a speculated state is on the screen until the answer is taken
  }
  if (!held) show(state, data);
  return () => setTimeout(() => {
    if (!state.root.isConnected) {
      state.observer.disconnect();
      clearTimeout(state.hoverTimer);
    }
  }, 0);
}
