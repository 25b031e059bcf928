// A panel of chips and buttons that stays mounted: `data.html` (built from escaped text in
// Python) replaces the content only when it changed; a click on <button data-event=NAME>
// sends the one-shot trigger NAME with the button's data-key / data-yes and a sequence
// number; <button data-copy=SELECTOR> copies the text of its sibling SELECTOR to the
// clipboard. One Streamlit element instead of one per chip, row and button.
//
// Optimistic answers (ui/optimistic.py): panels with `data.panel` register in a page-wide hub.
// The hidden carrier (`data.next`) holds every panel's data for the Yes and the No state of the
// shown variable, for the state `next.for` (the Decision Space's `data.state`). A Yes/No (button
// "answer", or key y/n) sends the answer and shows that state at once; until the server
// acknowledges its seq (`data.ack` of the ack element, drawn right after the panels), panels only
// remember the data the server sends, then show it (normally what they already show). Presses
// and the shortcuts of Back / Previous / Next that come while an answer is on its way are queued
// and replayed in order once the next state's speculation has arrived. A workspace's first
// render carries no next states (`data.defer`): once the page shows `data.defer` (the chart
// drawn), the carrier sends the trigger "painted", whose rerun brings them; the element has
// `data-speculated` while it holds some.
//
// While repair looks for other readings (ui/panels.py `search_watch`, in the panels fragment), a panel with `data.poll`
// sends the trigger "poll" `data.poll` ms after each render (again every second while no render
// answers); the server redraws it, or the panels once the repaired state is ready.

import {
  enqueue, forget, hub, idle, keyAction, SHORTCUTS, speculated, stamped, unacknowledged,
} from "./logic.js";

const PENDING_MS = 15000; // an answer never acknowledged (lost) stops waiting then
const PAINT_WAIT_MS = 5000; // "painted" is sent after this even if `data.defer` never shows

function whenPainted(selector, then, since = performance.now()) {
  // `then` after the frame that shows `selector` ("": the next frame) has been painted
  requestAnimationFrame(() => {
    if (!selector || document.querySelector(selector)
        || performance.now() - since > PAINT_WAIT_MS) setTimeout(then, 0);
    else whenPainted(selector, then, since);
  });
}

function dvButton(yes) {
  return document.querySelector(
    `[data-testid="pq-decision-variable"] button[data-event="answer"][data-yes="${yes ? 1 : 0}"]`);
}

function settle(h) {
  // the server has taken the answer (or never will): show what it sent last
  if (h.pending) clearTimeout(h.pending.timer);
  h.pending = null;
  for (const [key, entry] of h.panels) {
    if (!entry.alive()) h.panels.delete(key);
    else if (entry.latest) entry.show(entry.latest);
  }
}

function drain(h) {
  // replay what was pressed while an answer was on its way, one server round at a time
  while (!h.pending && !h.busy && h.queue.length) {
    const item = h.queue.shift();
    if (item.button) {
      const found = [...document.querySelectorAll(`[class*="-${item.button}"] button`)]
        .find((b) => b.offsetParent !== null && !b.disabled);
      if (!found) continue;
      h.busy = setTimeout(() => { h.busy = null; drain(h); }, PENDING_MS);
      h.next = null; // that rerun changes the state: its carrier brings the next ones
      found.click();
    } else {  // the question on the screen now: the one shown after the press before
      const button = dvButton(item.yes);
      if (button && !button.disabled) send(h, item.yes, button.dataset.key);
    }
  }
}

function send(h, yes, key) {
  const panel = document.querySelector('[data-testid="pq-decision-variable"]');
  if (!panel || !panel.__pq || !panel.__pq.send) return;
  const seq = ++h.seq;
  const views = speculated(h, yes, key);
  panel.__pq.send("answer", stamped(h, { key, yes, seq }));
  h.pending = { seq, timer: setTimeout(() => { settle(h); forget(h); }, PENDING_MS) };
  if (!views) return; // not speculated (e.g. a repaired pool): the rerun draws it
  setTimeout(() => {  // after Streamlit has sent the answer (it sends from a task too)
    if (!h.pending || h.pending.seq !== seq) return;
    for (const [name, data] of Object.entries(views)) {
      const entry = h.panels.get(name);
      if (entry && entry.alive()) entry.show(data);
    }
  }, 0);
}

function answer(h, yes) {
  // a Yes/No press on what is on the screen (possibly a speculated state); while an answer is
  // on its way it is queued, and then counts for the question shown after that answer
  const button = dvButton(yes);
  if (!button || button.disabled) return false;
  if (idle(h)) send(h, yes, button.dataset.key);
  else enqueue(h, { yes });
  return true;
}

function typing(target) {
  return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

function bindKeys(h) {
  if (h.keys) return;
  h.keys = true;
  // capture phase on window: before Streamlit's shortcut handler (hotkeys-js, on document)
  window.addEventListener("keydown", (ev) => {
    const action = keyAction(ev, h);
    if (!action || typing(ev.target)) return;
    if (!document.querySelector('[data-testid="pq-decision-variable"]')) return;
    const k = ev.key.toLowerCase();
    if (action === "answer") {
      if (answer(h, k === "y")) ev.preventDefault();
    } else { // keep Back / Previous / Next in order behind the answer on its way
      ev.preventDefault();
      ev.stopImmediatePropagation();
      enqueue(h, { button: SHORTCUTS[k] });
    }
  }, true);
  // a click on any other workspace control goes to the server now: drop what was queued
  window.addEventListener("click", (ev) => {
    const b = ev.target.closest && ev.target.closest("button");
    if (b && ev.isTrusted && !b.matches('[data-event="answer"], [data-copy], .pq-tools button')) {
      forget(h);
    }
  }, true);
}

// what a clause panel registered under `data.panel` does with a state: replace its HTML
function show(root, state, data) {
  if (data && data.testid) root.setAttribute("data-testid", data.testid);
  if (data && data.state !== undefined) hub().shown = data.state; // the Decision Space's state
  const html = String((data && data.html) || "");
  if (html === state.html) return;
  const active = document.activeElement;
  const focused = root.contains(active) ? [...root.querySelectorAll("button:not(:disabled)")]
    .indexOf(active) : -1;
  const scrolled = [...root.querySelectorAll("[data-scroll]")]
    .map((e) => [e.dataset.scroll, e.scrollTop]);
  root.innerHTML = html;
  state.html = html;
  for (const [name, top] of scrolled) {
    const box = root.querySelector(`[data-scroll="${name}"]`);
    if (box) box.scrollTop = top;
  }
  restoreFocus(root, focused);
}

function restoreFocus(root, index) {
  if (index < 0) return;
  const buttons = [...root.querySelectorAll("button:not(:disabled)")];
  const next = buttons[Math.min(index, buttons.length - 1)];
  if (next) {
    next.focus({ preventScroll: true });
  } else {  // e.g. a Yes that finished the task disabled both: keep the focus in the panel
    root.tabIndex = -1;
    root.focus({ preventScroll: true });
  }
}

function copyText(source, button) {
  // the Clipboard API needs a secure context (https or localhost); a lab machine on a plain-http
  // LAN address falls back to selecting the text and the old copy command
  const said = (text) => {
    button.textContent = text;
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  };
  const fallback = () => {
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    let ok = false;
    try { ok = document.execCommand("copy"); } catch (_err) { ok = false; }
    said(ok ? "Copied" : "Selected: press Ctrl+C");
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(source.innerText).then(() => said("Copied"), fallback);
  } else {
    fallback();
  }
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const h = hub();
  let root = parentElement.querySelector(":scope > .pq-panel");
  if (!root) {
    root = document.createElement("div");
    root.className = "pq-panel";
    parentElement.appendChild(root);
  }
  const state = root.__pq || (root.__pq = { seq: 0, html: null, bound: false });
  state.send = setTriggerValue;
  if (!state.bound) {
    state.bound = true;
    root.addEventListener("click", (ev) => {
      const copy = ev.target.closest("button[data-copy]");
      if (copy && root.contains(copy)) {  // copies in the browser; the server is not involved
        const source = copy.parentElement.querySelector(copy.dataset.copy);
        if (source) copyText(source, copy);
        return;
      }
      const button = ev.target.closest("button[data-event]");
      if (!button || button.disabled || !root.contains(button)) return;
      if (button.dataset.event === "answer") {
        answer(h, button.dataset.yes === "1");
        return;
      }
      forget(h);
      const value = { seq: ++state.seq };
      if (button.dataset.key !== undefined) value.key = button.dataset.key;
      if (button.dataset.yes !== undefined) value.yes = button.dataset.yes === "1";
      const press = stamped(h, value);
      if (button.dataset.event === "clause") {
        // Streamlit keeps only this panel's newest trigger of one busy run: repeat the clause
        // presses the server has not acknowledged yet (it applies each once, in order)
        state.unacked = unacknowledged(h, state.unacked || []);
        state.send("clause", { ...press, earlier: state.unacked.slice() });
        state.unacked.push(press);
        return;
      }
      state.send(button.dataset.event, press);
    });
  }
  if (data && "ack" in data) {  // drawn right after the panels: the server took that answer
    root.setAttribute("data-testid", data.testid || "pq-ack");
    const ack = data.ack || {};
    root.dataset.ack = String(ack.seq ?? "");
    if (Array.isArray(data.applied) && data.applied[0] === h.page) {
      h.applied = Math.max(h.applied || 0, Number(data.applied[1]) || 0);
    }
    if (h.pending && ack.seq === h.pending.seq) {
      settle(h);
      if (!ack.ok) forget(h); // refused (the question had changed): what followed it goes too
    }
    return;
  }
  if (data && "next" in data) {  // drawn last: the next states, then what was queued
    bindKeys(h);
    root.setAttribute("data-testid", data.testid || "pq-next");
    h.next = data.next;
    if (data.next) root.dataset.speculated = "1";
    else delete root.dataset.speculated;
    if ("defer" in data) {  // the first render: ask for the next states once it is painted
      whenPainted(data.defer, () => {
        if (root.isConnected) state.send("painted", { seq: ++state.seq });
      });
    }
    if (h.busy) {
      clearTimeout(h.busy);
      h.busy = null;
    }
    drain(h);
    return;
  }
  if (data && data.poll) {  // a repair runs on the server: ask whether it is done, once a round
    clearTimeout(state.poll);
    const ask = (delay) => {
      state.poll = setTimeout(() => {
        if (!root.isConnected) return;
        state.send("poll", { seq: ++state.seq });
        ask(Math.max(1000, 10 * data.poll)); // no answer (its rerun was cut short): ask again
      }, delay);
    };
    ask(data.poll);
  }
  if (data && data.panel) {
    const entry = h.panels.get(data.panel);
    if (!entry || entry.root !== root) {
      h.panels.set(data.panel, { root, latest: data, alive: () => root.isConnected,
                                 show: (d) => show(root, state, d) });
    } else {
      entry.latest = data;
    }
    if (h.pending) return; // a speculated state is on the screen until the answer is taken
  }
  show(root, state, data);
}
