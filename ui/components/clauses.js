// A panel of chips and buttons that stays mounted: `data.html` (built from escaped text in
// Python) replaces the content only when it changed; a click on <button data-event=NAME>
// sends the one-shot trigger NAME with the button's data-key / data-yes and a sequence
// number; <button data-copy=SELECTOR> copies the text of its sibling SELECTOR to the
// clipboard. One Streamlit element instead of one per chip, row and button.
//
// Optimistic answers (ui/optimistic.py): panels with `data.panel` register in a page-wide hub.
// The hidden carrier (`data.next`, `data.ack`) holds every panel's data for the Yes and the No
// state of the shown variable. A Yes/No (button "answer", or key y/n) shows that state at once
// and sends the answer; until the server acknowledges its seq, panels only remember the data
// the server sends, then show it (normally what they already show, so nothing is redrawn).

const PENDING_MS = 4000; // an answer never acknowledged (lost, refused) stops waiting then

function hub() {
  return window.__pqHub || (window.__pqHub = {
    panels: new Map(), next: null, pending: null, queue: [], seq: 0, keys: false });
}

function settle(h) {
  // the server has taken the answer (or never will): show what it sent last, then the next press
  if (h.pending) clearTimeout(h.pending.timer);
  h.pending = null;
  for (const [key, entry] of h.panels) {
    if (!entry.alive()) h.panels.delete(key);
    else if (entry.latest) entry.show(entry.latest);
  }
  if (h.queue.length) answer(h, h.queue.shift());
}

function answer(h, yes) {
  if (h.pending) {
    if (h.queue.length < 4) h.queue.push(yes);
    return;
  }
  const button = document.querySelector(
    `[data-testid="pq-decision-variable"] button[data-event="answer"][data-yes="${yes ? 1 : 0}"]`);
  const root = button && button.closest(".pq-panel");
  if (!button || button.disabled || !root || !root.__pq.send) return;
  const key = button.dataset.key;
  const seq = ++h.seq;
  const views = h.next && h.next.key === key ? h.next[yes ? "y" : "n"] : null;
  h.next = null;
  root.__pq.send("answer", { key, yes, seq });
  if (!views) return; // not speculated (e.g. a repaired pool): the rerun draws it
  h.pending = { seq, timer: setTimeout(() => settle(h), PENDING_MS) };
  setTimeout(() => {  // after Streamlit has sent the answer (it sends from a task too)
    for (const [name, data] of Object.entries(views)) {
      const entry = h.panels.get(name);
      if (entry && entry.alive()) entry.show(data);
    }
  }, 0);
}

function typing(target) {
  return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

function bindKeys(h) {
  if (h.keys) return;
  h.keys = true;
  document.addEventListener("keydown", (ev) => {
    if (ev.defaultPrevented || ev.repeat || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = ev.key.toLowerCase();
    if ((k !== "y" && k !== "n") || typing(ev.target)) return;
    if (!document.querySelector('[data-testid="pq-decision-variable"]')) return;
    ev.preventDefault();
    answer(h, k === "y");
  });
}

// what a clause panel registered under `data.panel` does with a state: replace its HTML
function show(root, state, data) {
  if (data && data.testid) root.setAttribute("data-testid", data.testid);
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
  if (next) next.focus({ preventScroll: true });
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
      const value = { seq: ++state.seq };
      if (button.dataset.key !== undefined) value.key = button.dataset.key;
      if (button.dataset.yes !== undefined) value.yes = button.dataset.yes === "1";
      state.send(button.dataset.event, value);
    });
  }
  if (data && "next" in data) {  // the carrier: the next states, and the last answer taken
    bindKeys(h);
    root.setAttribute("data-testid", data.testid || "pq-next");
    root.dataset.ack = String(data.ack ?? "");
    h.next = data.next;
    if (h.pending && data.ack === h.pending.seq) settle(h);
    return;
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
