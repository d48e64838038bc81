// The overview's table. Thousands of rows may be loaded ("Load more"), and
// a fleet writes in bursts: changes are applied once per animation frame,
// a change rebuilds only its own row, and a row is moved only when its
// place changes. Rebuilding the whole table per change froze a page of
// 3,100 rows for seconds under a burst of 20.

import { h, ago, badge, progress, agentName, rank } from "./dom.js";

let rows = null;        // the page's rows: Map id → row
const drawn = new Map(); // id → {row, tr}: what the table shows of each
const heads = new Map(); // parent → its group's header row
const flashes = new Set();
let frame = 0;
let empty = null;

// initRows takes the page's rows, which draw reads.
export function initRows(m) { rows = m; }

// resetRows forgets what was drawn (a new table).
export function resetRows() {
  drawn.clear();
  heads.clear();
  cancelAnimationFrame(frame);
  frame = 0;
}

// drawSoon brings the table up to date at the next frame; flashID, when
// given, is a row that changed and flashes.
export function drawSoon(flashID) {
  if (flashID) flashes.add(flashID);
  if (!frame) frame = requestAnimationFrame(draw);
}

// drawNow brings the table up to date at once.
export function drawNow() {
  cancelAnimationFrame(frame);
  draw();
}

function draw() {
  frame = 0;
  const tbody = document.querySelector("#rows tbody");
  if (!tbody) return;
  // Attention first: what needs a person leads each group, then by ID.
  const sorted = [...rows.values()].sort((a, b) => rank(a.presence) - rank(b.presence) || (a.id < b.id ? -1 : 1));
  const groups = new Map();
  for (const r of sorted) {
    const g = r.parent || "";
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(r);
  }
  const want = [];
  for (const [parent, rs] of groups) {
    if (groups.size > 1 || parent) want.push(head(parent));
    for (const r of rs) want.push(rowOf(r));
  }
  for (const [id, d] of drawn) if (!rows.has(id)) { d.tr.remove(); drawn.delete(id); }
  for (const [g, tr] of heads) if (!groups.has(g) || (groups.size === 1 && !g)) { tr.remove(); heads.delete(g); }
  if (want.length === 0) {
    empty = empty || h("tr", { role: "row", class: "group" }, h("td", { colspan: 6, role: "cell", class: "muted" }, "No checkpoints match these filters."));
    want.push(empty);
  }
  // Walk the table once, moving only what is out of place.
  let cur = tbody.firstChild;
  for (const tr of want) {
    if (cur === tr) cur = cur.nextSibling;
    else tbody.insertBefore(tr, cur);
  }
  while (cur) { const next = cur.nextSibling; cur.remove(); cur = next; }
  flashes.clear();
}

function head(parent) {
  let tr = heads.get(parent);
  if (!tr) {
    tr = h("tr", { class: "group", role: "row" }, h("th", { colspan: 6, scope: "colgroup", role: "rowheader" }, parent ? `Parent: ${parent}` : "No parent"));
    heads.set(parent, tr);
  }
  return tr;
}

// rowOf returns r's table row: the one drawn when r is unchanged (the same
// object, or one that says the same), else a new one.
function rowOf(r) {
  const d = drawn.get(r.id);
  if (d && (d.row === r || JSON.stringify(d.row) === JSON.stringify(r))) {
    d.row = r;
    return d.tr;
  }
  const tr = rowElement(r, flashes.has(r.id));
  if (d) d.tr.replaceWith(tr);
  drawn.set(r.id, { row: r, tr });
  return tr;
}

function rowElement(r, flash) {
  const callouts = [];
  if (r.active_blockers) callouts.push(h("span", { class: "callout" }, `⚠ ${r.active_blockers} blocker${r.active_blockers > 1 ? "s" : ""}`));
  if (r.blocking_errors) callouts.push(h("span", { class: "callout" }, `⚠ ${r.blocking_errors} blocking error${r.blocking_errors > 1 ? "s" : ""}`));
  const td = (label, ...kids) => h("td", { "data-label": label, role: "cell" }, ...kids);
  return h("tr", { "data-id": r.id, role: "row", class: flash ? "flash" : "" },
    td("Presence", badge(r), r.presence_why ? h("div", { class: "muted why" }, r.presence_why) : null),
    td("Checkpoint", h("a", { href: "/c/" + r.id }, r.id), r.title ? h("div", { class: "muted" }, r.title) : null, callouts),
    td("Agent", agentName(r.agent)),
    td("Progress", progress(r.progress)),
    td("Current step", r.current_step || "-"),
    td("Last seen", h("time", { datetime: r.last_seen, "data-ago": r.last_seen }, ago(r.last_seen))));
}
