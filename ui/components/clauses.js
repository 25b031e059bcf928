// A panel of chips and buttons that stays mounted: `data.html` (built from escaped text in
// Python) replaces the content only when it changed; a click on <button data-event=NAME>
// sends the one-shot trigger NAME with the button's data-key / data-yes and a sequence
// number; <button data-copy=SELECTOR> copies the text of its sibling SELECTOR to the
// clipboard. One Streamlit element instead of one per chip, row and button.

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
  let root = parentElement.querySelector(":scope > .pq-panel");
  if (!root) {
    root = document.createElement("div");
    root.className = "pq-panel";
    parentElement.appendChild(root);
  }
  const state = root.__pq || (root.__pq = { seq: 0, html: null, bound: false });
  state.send = setTriggerValue;
  if (data && data.testid) root.setAttribute("data-testid", data.testid);
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
      const value = { seq: ++state.seq };
      if (button.dataset.key !== undefined) value.key = button.dataset.key;
      if (button.dataset.yes !== undefined) value.yes = button.dataset.yes === "1";
      state.send(button.dataset.event, value);
    });
  }
  const html = String((data && data.html) || "");
  if (html !== state.html) {
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
}
