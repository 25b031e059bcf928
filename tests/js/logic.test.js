// Unit tests of the components' pure logic (ui/components/logic.js): `node --test tests/js/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  boxCorners, enqueue, forget, frameOf, hub, IDENTITY, idle, idsInside, inside, isIdentity,
  keyAction, labelBox, labelPosition, MAX_ZOOM, mayHover, panBy, QUEUE_MAX, SELECT_HOLD_MS,
  speculated, stamped, starPoints, tipPosition, unacknowledged, zoomAt,
} from "../../ui/components/logic.js";

const SQUARE = [[0, 0], [10, 0], [10, 10], [0, 10]];
const SPACE = { margin: 10, height: 220 };

test("inside: the square's interior, not its outside", () => {
  assert.equal(inside(SQUARE, 5, 5), true);
  assert.equal(inside(SQUARE, 11, 5), false);
  assert.equal(inside(SQUARE, 5, -1), false);
});

test("inside: a concave lasso leaves its notch out", () => {
  const u = [[0, 0], [10, 0], [10, 10], [7, 10], [7, 3], [3, 3], [3, 10], [0, 10]];
  assert.equal(inside(u, 1, 5), true);
  assert.equal(inside(u, 5, 5), false); // in the notch
  assert.equal(inside(u, 9, 9), true);
});

test("inside: a self-crossing lasso follows the even-odd rule", () => {
  const bow = [[0, 0], [10, 10], [10, 0], [0, 10]]; // two triangles meeting at (5, 5)
  assert.equal(inside(bow, 2, 5), true);
  assert.equal(inside(bow, 5, 2), false);
});

test("frameOf maps the data square into the margins, y up", () => {
  const fr = frameOf(220, SPACE);
  assert.deepEqual([fr.px(0), fr.px(1), fr.py(0), fr.py(1)], [10, 210, 210, 10]);
  assert.deepEqual([fr.w, fr.h, fr.m], [200, 200, 10]);
});

test("boxCorners spans the drag in either direction", () => {
  assert.deepEqual(boxCorners([5, 8], [1, 2]), [[5, 8], [1, 8], [1, 2], [5, 2]]);
});

test("idsInside picks the glyph centres in the lasso, sorted", () => {
  const fr = frameOf(220, SPACE);
  const glyphs = [{ id: 9, x: 0.5, y: 0.5 }, { id: 2, x: 0.45, y: 0.55 }, { id: 4, x: 0.9, y: 0.9 }];
  const lasso = [[90, 90], [130, 90], [130, 130], [90, 130]]; // px around the centre
  assert.deepEqual(idsInside(glyphs, lasso, fr), [2, 9]);
  assert.deepEqual(idsInside(glyphs, [[0, 0], [1, 0], [1, 1]], fr), []);
});

test("starPoints: ten points alternating between the two radii", () => {
  const pts = starPoints(0, 0).split(" ").map((p) => p.split(",").map(Number));
  assert.equal(pts.length, 10);
  assert.deepEqual(pts[0], [0, -5]); // the top point first
  pts.forEach(([x, y], k) => {  // coordinates are rounded to 0.1 px
    assert.ok(Math.abs(Math.hypot(x, y) - (k % 2 ? 2.2 : 5)) < 0.1, `point ${k}`);
  });
});

test("tipPosition: right of the point, left of it near the edge, inside the height", () => {
  assert.deepEqual(tipPosition(100, 100, 50, 20, 400, 300), { left: 114, top: 90 });
  assert.deepEqual(tipPosition(380, 100, 50, 20, 400, 300), { left: 316, top: 90 });
  assert.deepEqual(tipPosition(10, 295, 50, 20, 400, 300), { left: 24, top: 280 });
  assert.deepEqual(tipPosition(10, 2, 50, 20, 400, 300), { left: 24, top: 0 });
  // wider than the room on either side: never past the left edge
  assert.deepEqual(tipPosition(200, 100, 300, 20, 400, 300), { left: 0, top: 90 });
  // a point panned past the right edge: the tooltip stays inside the chart
  assert.deepEqual(tipPosition(450, 100, 50, 20, 400, 300), { left: 350, top: 90 });
});

test("zoomAt keeps the point under the cursor in place and stays within bounds", () => {
  const v = zoomAt(IDENTITY, 2, 0.25, 0.75);
  assert.equal(v.k, 2);
  // the data point shown at u = 0.25 before is still at u = 0.25
  const x = (0.25 - IDENTITY.x0) / IDENTITY.k;
  assert.ok(Math.abs(v.x0 + x * v.k - 0.25) < 1e-12);
  assert.equal(zoomAt(IDENTITY, 0.5, 0.5, 0.5).k, 1); // never smaller than the whole space
  assert.equal(zoomAt({ k: MAX_ZOOM, x0: -5, y0: -5 }, 3, 0.5, 0.5).k, MAX_ZOOM);
  assert.ok(isIdentity(zoomAt(v, 0.5, 0.25, 0.75)));
});

test("panBy moves the view but never past the data", () => {
  const v = zoomAt(IDENTITY, 4, 0.5, 0.5);
  const moved = panBy(v, 0.1, -0.2);
  assert.ok(Math.abs(moved.x0 - (v.x0 + 0.1)) < 1e-12 && Math.abs(moved.y0 - (v.y0 - 0.2)) < 1e-12);
  assert.deepEqual(panBy(v, 100, 100), { k: 4, x0: 0, y0: 0 });
  assert.deepEqual(panBy(v, -100, -100), { k: 4, x0: -3, y0: -3 });
  assert.deepEqual(panBy(IDENTITY, 0.3, 0.3), { k: 1, x0: 0, y0: 0 });
  const fr = frameOf(220, SPACE, moved);
  assert.ok(Math.abs(fr.px(0.5) - (10 + (moved.x0 + 0.5 * 4) * 200)) < 1e-9);
});

test("hub: one object per page, whichever component makes it", () => {
  const page = {};
  const h = hub(page);
  assert.equal(hub(page), h);
  assert.deepEqual(Object.keys(h).sort(),
    ["applied", "busy", "keys", "next", "order", "page", "panels", "pending", "queue", "seq",
      "shown"]);
  assert.notEqual(hub({}), h);
});

test("the answer queue: idle, kept up to its cap, dropped by another gesture", () => {
  const h = hub({});
  assert.equal(idle(h), true);
  h.pending = { seq: 1 };
  assert.equal(idle(h), false);
  for (let i = 0; i < QUEUE_MAX; i++) assert.equal(enqueue(h, { yes: i % 2 === 0 }), true);
  assert.equal(enqueue(h, { yes: true }), false);
  assert.equal(h.queue.length, QUEUE_MAX);
  h.next = { for: "s", key: "k" };
  forget(h);
  assert.deepEqual([h.queue.length, h.next], [0, null]);
  h.pending = null;
  assert.equal(idle(h), true);
});

test("speculated: only for the state on the screen and the variable asked; used once", () => {
  const h = hub({});
  const next = { for: "s1", key: "k", y: { a: 1 }, n: { a: 2 } };
  h.shown = "s1";
  h.next = next;
  assert.deepEqual(speculated(h, true, "k"), { a: 1 });
  assert.equal(h.next, null);
  assert.equal(speculated(h, true, "k"), null); // used up
  h.next = next;
  assert.equal(speculated(h, false, "other"), null); // another variable
  h.next = next;
  h.shown = "s2";
  assert.equal(speculated(h, false, "k"), null); // the screen moved on
});

test("keyAction: y/n answer, shortcuts queue only behind an answer, modifiers are not ours", () => {
  const h = hub({});
  const key = (k, extra = {}) => keyAction({ key: k, ...extra }, h);
  assert.equal(key("y"), "answer");
  assert.equal(key("N"), "answer");
  assert.equal(key("b"), null); // idle: Streamlit's own shortcut handles Back
  h.pending = { seq: 1 };
  assert.equal(key("b"), "queue");
  assert.equal(key("ArrowUp"), "queue");
  assert.equal(key("x"), null);
  for (const mod of ["ctrlKey", "metaKey", "altKey", "repeat", "isComposing", "defaultPrevented"]) {
    assert.equal(key("y", { [mod]: true }), null, mod);
  }
  assert.equal(keyAction({}, h), null); // no key value
});

test("stamped: presses carry their order on the page and the page load's id", () => {
  const scope = {};
  const h = hub(scope);
  const a = stamped(h, { key: "k", yes: true, seq: 1 });
  const b = stamped(h, { key: "c", seq: 1 });
  assert.deepEqual([a.at, b.at], [1, 2]);
  assert.equal(a.page, b.page);
  assert.equal(a.key, "k");
  assert.ok(typeof a.page === "string" && a.page.length > 0 && a.page.length <= 16);
  assert.notEqual(hub({}).page, undefined);
});

test("unacknowledged: a press is repeated until the server has applied it", () => {
  const h = hub({});
  const a = stamped(h, { key: "a" });
  const b = stamped(h, { key: "b" });
  assert.deepEqual(unacknowledged(h, [a, b]).map((p) => p.key), ["a", "b"]);
  h.applied = a.at;
  assert.deepEqual(unacknowledged(h, [a, b]).map((p) => p.key), ["b"]);
  h.applied = b.at;
  assert.deepEqual(unacknowledged(h, [a, b]), []);
  const other = { ...a, page: "another load" };
  h.applied = 0;
  assert.deepEqual(unacknowledged(h, [other]), []);
  const many = Array.from({ length: 20 }, (_, i) => stamped(h, { key: String(i) }));
  assert.equal(unacknowledged(h, many).length, 16);
});

test("mayHover: no hover while a selection is on its way, for at most the hold", () => {
  assert.equal(mayHover(null, 0, 100), true);
  assert.equal(mayHover("3:12:0", 1000, 1200), false);
  assert.equal(mayHover("3:12:0", 1000, 1000 + SELECT_HOLD_MS), true);
});

test("labelPosition: above the centre, else below it where the toolbar would cover it", () => {
  const fr = frameOf(480, { margin: 4, height: 440 });
  const bar = { left: 240, top: 6, right: 474, bottom: 28 };
  assert.deepEqual(labelPosition(100, 200, fr, [bar]), { x: 100, y: 170 }); // open: above
  assert.deepEqual(labelPosition(300, 50, fr, [bar]), { x: 300, y: 80 }); // under the bar: below
  assert.deepEqual(labelPosition(100, 20, fr, [bar]), { x: 100, y: 50 }); // above the top: below
  assert.deepEqual(labelPosition(100, 20, fr), { x: 100, y: 50 });
  const tiny = frameOf(60, { margin: 4, height: 40 }); // nowhere clear: inside, under the bar
  assert.deepEqual(labelPosition(30, 20, tiny, [{ left: 0, top: 0, right: 60, bottom: 10 }]),
                   { x: 30, y: 19 });
});

test("labelPosition: numbers of neighbouring clusters keep clear of each other", () => {
  const fr = frameOf(480, { margin: 4, height: 440 });
  const placed = [];
  for (const [x, y] of [[200, 200], [206, 204], [196, 198], [203, 201]]) { // four crowded centres
    const p = labelPosition(x, y, fr, placed);
    for (const r of placed) {
      const b = labelBox(p);
      assert.ok(b.right <= r.left || b.left >= r.right || b.bottom <= r.top || b.top >= r.bottom,
                `${JSON.stringify(p)} overlaps ${JSON.stringify(r)}`);
    }
    placed.push(labelBox(p));
  }
  assert.deepEqual(labelPosition(200, 200, fr, []), { x: 200, y: 170 });
});
