// ckpt dashboard. Plain modules, no build step. Every string from the store
// goes into the page through textContent or attributes, never as HTML.

import { initInbox, inboxSection, refreshInbox, refreshInboxSoon } from "./inbox.js";
import { h, clock, now, ago, badge, progress, agentName, presenceClass, rank, PRESENCE_ORDER } from "./dom.js";
import { initRows, resetRows, drawSoon, drawNow } from "./rows.js";
import { initRevision, previewSlot, showPreview, reopenPreview } from "./revision.js";
import { entered } from "./announce.js";
import { initBulk, bulkSection } from "./bulk.js";

const FILTERS = ["status", "presence", "agent", "parent", "label", "prefix", "q"];

const state = { me: null, rows: new Map(), next: "", filters: {}, view: null };
initRows(state.rows);

function csrf() {
  const m = document.cookie.match(/(?:^|;\s*)ckpt_csrf=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : "";
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Ckpt-Csrf": csrf() },
    body: JSON.stringify(body),
  };
  const res = await fetch(path, { credentials: "same-origin", ...init });
  if (res.status === 401) {
    location.assign("/login?next=" + encodeURIComponent(location.pathname + location.search));
    throw new Error("signed out");
  }
  const out = await res.json();
  if (!res.ok) throw new Error(out.message || res.statusText);
  return out;
}

function setLive(on, text) {
  const el = document.getElementById("live");
  el.className = "live " + (on ? "on" : "off");
  el.textContent = text;
}

function showMe(me) {
  state.me = me;
  document.getElementById("who").textContent = me.sign_in ? `signed in as ${me.name}${me.write ? "" : " (read only)"}` : "";
  const so = document.getElementById("signout");
  so.hidden = !me.sign_in;
  so.querySelector('input[name="csrf"]').value = csrf();
}

// ---- overview ----

function readFilters() {
  const q = new URLSearchParams(location.search);
  const f = {};
  for (const k of FILTERS) if (q.get(k)) f[k] = q.get(k);
  return f;
}

function filterQuery(f, extra) {
  const q = new URLSearchParams();
  for (const k of FILTERS) if (f[k]) q.set(k, f[k]);
  for (const [k, v] of Object.entries(extra || {})) if (v) q.set(k, v);
  return q.toString();
}

// matches mirrors the server's filters, for rows that change while shown.
function matches(row, f) {
  const inList = (v, list) => !list || list.split(",").map((s) => s.trim()).includes(v);
  if (!inList(row.status, f.status) || !inList(row.presence, f.presence)) return false;
  if (f.agent && row.agent.id !== f.agent && row.agent.name !== f.agent) return false;
  if (f.parent && row.parent !== f.parent) return false;
  if (f.prefix && !row.id.startsWith(f.prefix)) return false;
  if (f.label && !(row.labels || []).includes(f.label)) return false;
  if (f.q) {
    const hay = [row.id, row.title, row.agent.name, row.agent.id, row.current_step].join(" ").toLowerCase();
    if (!hay.includes(f.q.toLowerCase())) return false;
  }
  return !row.archived;
}

async function overview() {
  state.view = "overview";
  state.detail = null;
  state.filters = readFilters();
  state.rows.clear();
  resetRows();
  const out = await api("/ui/api/overview?" + filterQuery(state.filters));
  clock.skew = Date.parse(out.now) - Date.now();
  connect(out.cursor);
  showMe(out.me);
  const main = document.getElementById("main");
  main.replaceChildren(
    h("h1", { class: "sr-only" }, "Checkpoints"),
    inboxSection(),
    h("h2", { class: "fleet-title" }, "All checkpoints"),
    h("ul", { class: "counts", id: "counts", "aria-label": "Checkpoints by presence" }),
    filtersForm(),
    out.me.write ? bulkSection() : null,
    h("p", { id: "damaged", class: "error", role: "alert", hidden: true }),
    // The roles are the table's own: its CSS lays it out as a grid.
    h("table", { class: "rows", id: "rows", role: "table", "aria-label": "Checkpoints, grouped by parent" },
      h("thead", { role: "rowgroup" }, h("tr", { role: "row" }, ["Presence", "Checkpoint", "Agent", "Progress", "Current step", "Last seen"].map((t) => h("th", { scope: "col", role: "columnheader" }, t)))),
      h("tbody", { role: "rowgroup" })),
    h("div", { class: "more" }, h("button", { id: "more", type: "button", hidden: true, onclick: loadMore }, "Load more")));
  showCounts(out.counts || {});
  addRows(out);
  refreshInbox().catch(() => {});
  document.title = "ckpt";
}

function filtersForm() {
  const f = state.filters;
  const field = (name, label, attrs) => h("label", {}, label, h("input", { name, value: f[name] || "", ...attrs }));
  const select = (name, label, options) => h("label", {}, label,
    h("select", { name }, h("option", { value: "" }, "any"),
      options.map((o) => h("option", { value: o, selected: f[name] === o }, o))));
  return h("form", { class: "filters", role: "search", "aria-label": "Filter checkpoints", onsubmit: (e) => {
    e.preventDefault();
    const data = new FormData(e.target);
    const nf = {};
    for (const k of FILTERS) if (data.get(k)) nf[k] = String(data.get(k));
    history.pushState(null, "", "/?" + filterQuery(nf));
    route();
  } },
  select("presence", "Presence", PRESENCE_ORDER.concat(["pending", "done", "abandoned"])),
  select("status", "Status", ["pending", "in_progress", "waiting", "blocked", "done", "failed", "abandoned"]),
  field("agent", "Agent", { size: 12 }), field("parent", "Parent", { size: 12 }), field("prefix", "ID prefix", { size: 10 }),
  field("label", "Label", { size: 10 }), field("q", "Text", { type: "search", size: 16 }),
  h("button", { type: "submit" }, "Filter"),
  h("a", { href: "/" }, "Clear"));
}

function showCounts(counts) {
  const ul = document.getElementById("counts");
  if (!ul) return;
  const words = Object.keys(counts).sort((a, b) => rank(a) - rank(b));
  ul.replaceChildren(...words.map((w, i) => {
    const text = w === "waiting" ? `${counts[w]} waiting for you` : `${counts[w]} ${w}`;
    return h("li", {}, h("a", { href: "/?" + filterQuery({ ...state.filters, presence: w }), class: (i === 0 && w === "waiting" ? "first " : "") + presenceClass(w) }, text));
  }));
  if (words.length === 0) ul.replaceChildren(h("li", { class: "muted" }, "No checkpoints match."));
}

function addRows(out) {
  for (const row of out.rows) state.rows.set(row.id, row);
  if (!performance.getEntriesByName("ckpt-first-rows").length) performance.mark("ckpt-first-rows");
  state.next = out.next || "";
  document.getElementById("more").hidden = !state.next;
  const d = document.getElementById("damaged");
  if (out.damaged && out.damaged.length) {
    d.hidden = false;
    d.textContent = `Could not read ${out.damaged.join(", ")}: run ckpt check, then ckpt repair.`;
  }
  drawNow();
}

let loading = false;
async function loadMore() {
  if (loading) return; // a second press while the first loads
  loading = true;
  try {
    const out = await api("/ui/api/overview?" + filterQuery(state.filters, { after: state.next }));
    addRows(out);
  } finally {
    loading = false;
  }
}

let countsTimer = null;
function refreshCountsSoon() {
  if (countsTimer) return;
  countsTimer = setTimeout(async () => {
    countsTimer = null;
    if (state.view !== "overview") return;
    const out = await api("/ui/api/overview?" + filterQuery(state.filters, { limit: "1" }));
    showCounts(out.counts || {});
  }, 1000);
}

async function onChangeOverview(c) {
  refreshCountsSoon();
  if (c.kind === "deleted") {
    if (state.rows.delete(c.id)) drawSoon();
    return;
  }
  const known = state.rows.has(c.id);
  const inRange = !state.next || c.id < state.next;
  if (!known && !inRange) return;
  // A change carries its row (read once by the server for every page);
  // one that could not be read then is fetched.
  let row = c.row;
  if (!row) {
    try { row = await api("/ui/api/row?id=" + encodeURIComponent(c.id)); } catch { return; }
  }
  if (matches(row, state.filters)) state.rows.set(row.id, row);
  else state.rows.delete(row.id);
  drawSoon(row.id);
}

// ---- one checkpoint ----

async function detail(id) {
  state.view = "detail:" + id;
  const out = await api("/ui/api/checkpoint?id=" + encodeURIComponent(id));
  clock.skew = Date.parse(out.now) - Date.now();
  connect(out.cursor);
  showMe(out.me);
  const c = out.state;
  document.title = `${c.id} · ckpt`;
  if (state.detail && state.detail.id === id && state.detail.presence !== out.row.presence) entered(id, out.row.presence, out.row.presence_why);
  const main = document.getElementById("main");
  main.replaceChildren(h("div", { class: "detail" },
    h("p", {}, h("a", { href: "/" }, "← All checkpoints")),
    h("h1", {}, c.title || c.id),
    h("div", { class: "meta" }, badge(out.row), h("code", {}, c.id), h("span", {}, "status " + c.status),
      h("span", {}, "agent " + agentName(c.agent)), h("span", {}, `revision ${c.rev}`),
      h("span", {}, "last seen ", h("time", { datetime: out.row.last_seen, "data-ago": out.row.last_seen }, ago(out.row.last_seen))),
      progress(c.progress)),
    familyNav(c, out.family),
    out.can_act ? actions(c) : null,
    previewSlot(),
    h("div", { class: "grid" },
      card("Why " + out.why.presence.state, why(out.why)),
      card("Steps", stepsChart(c)),
      card("Signs of life", h("div", { id: "life" }, h("p", { class: "muted" }, "Loading…"))),
      card("Blockers and errors", problems(c, out.can_act)),
      card("Messages waiting for the agent", list(c.messages, (m) => [h("strong", {}, m.from), ": ", m.text, " ", h("span", { class: "muted" }, ago(m.at))])),
      card("Decisions", list(c.decisions, (d) => [h("strong", {}, d.text), d.reason ? " — " + d.reason : "", " ", h("span", { class: "muted" }, ago(d.at))])),
      card("Acceptance criteria", list(c.acceptance, (a) => [a.met ? "✔ " : "✘ ", a.title || a.id, a.met ? "" : " (unmet)"])),
      card("Files", files(c)),
      card("Code", code(c)),
      card("Continuation prompt", promptBox(out.prompt))),
    card("Timeline", h("ol", { class: "timeline", id: "timeline", "aria-label": "Events, newest first" }),
      h("button", { type: "button", id: "older", hidden: true, onclick: olderEvents }, "Older events"))));
  state.detail = { id, c, oldest: c.rev + 1, events: [], presence: out.row.presence };
  reopenPreview(id);
  await olderEvents();
}

// familyNav links the checkpoint's parent and its children (checkpoints
// created with --parent ID): a parent that is only a group name links to
// the overview filtered by it.
function familyNav(c, fam) {
  if (!fam || (!fam.parent && !fam.children.length)) return null;
  const link = (l) => [h("a", { href: "/c/" + l.id }, l.id), " ", l.presence ? badge({ presence: l.presence }) : null, l.title ? h("span", { class: "muted" }, " " + l.title) : null];
  const parent = fam.parent && (fam.parent.exists ? link(fam.parent)
    : [h("a", { href: "/?parent=" + encodeURIComponent(fam.parent.id) }, fam.parent.id), h("span", { class: "muted" }, " (a group, not a checkpoint: its checkpoints)")]);
  return h("nav", { class: "family", id: "family", "aria-label": "Parent and children" },
    parent ? h("p", { id: "parent-link" }, h("strong", {}, "Parent: "), parent) : null,
    fam.children.length ? h("div", {}, h("strong", { id: "children-title" }, `Children (${fam.children.length}${fam.more_children ? "+" : ""}):`),
      h("ul", { id: "children", "aria-labelledby": "children-title" }, fam.children.map((l) => h("li", {}, link(l)))),
      fam.more_children ? h("a", { href: "/?parent=" + encodeURIComponent(c.id) }, "All children in the overview") : null) : null);
}

// why explains the checkpoint's presence as `ckpt why` does: the rule and
// signal that decided it, since when, the process, what would change it.
function why(w) {
  const v = w.presence;
  const rows = [
    ["State", v.state + (v.for ? " for a " + v.for : "") + (v.since ? ", since " + ago(v.since) + " (" + clockTime(v.since) + ")" : "")],
    ["Why", v.why], ["Rule", w.rule.n + ": " + w.rule.when], ["Signal", w.rule.signal],
    ["Last seen", w.last_seen ? ago(w.last_seen) + " (" + clockTime(w.last_seen) + ")" + (v.suspect ? ", ahead of the server's clock: suspect" : "") : ""],
    ["Process", v.process ? `${v.process.pid} on ${v.process.host || "?"} (${w.process_is})` : ""],
    ["Session", w.session], ["What changes it", w.rule.change],
  ].filter(([, text]) => text);
  return h("dl", { class: "why-card", id: "why" }, rows.map(([k, text]) => [h("dt", {}, k), h("dd", {}, text)]),
    (v.blockers || []).map((b) => [h("dt", {}, "Blocker"), h("dd", {}, b)]));
}

// clockTime is an RFC 3339 time to the second, in UTC, as a person reads
// it ("2026-01-15 14:30:05 UTC"); the input as it is when it is not one.
function clockTime(iso) {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toISOString().slice(0, 19).replace("T", " ") + " UTC";
}

function card(title, ...body) { return h("section", { class: "card", "aria-label": title }, h("h2", {}, title), ...body); }

function list(items, fn) {
  if (!items || items.length === 0) return h("p", { class: "muted" }, "None.");
  return h("ul", {}, items.map((x) => h("li", {}, fn(x))));
}

function problems(c, canAct) {
  const blockers = (c.blockers || []).filter((b) => !b.cleared_at);
  const errors = (c.errors || []).filter((e) => !e.cleared_at);
  if (!blockers.length && !errors.length) return h("p", { class: "muted" }, "None active.");
  return h("ul", {},
    blockers.map((b) => h("li", {}, h("strong", {}, "Blocker: "), b.text, " ", h("span", { class: "muted" }, "since " + ago(b.since)), " ",
      canAct ? h("button", { type: "button", onclick: () => act({ action: "unblock", id: c.id, blocker: b.id }, `Clear the blocker "${b.text}"?`) }, "Clear blocker") : null)),
    errors.map((e) => h("li", {}, h("strong", {}, e.blocking ? "Blocking error: " : "Error: "), e.message)));
}

function files(c) {
  const f = c.files || {};
  const all = (f.created || []).map((x) => x + " (created)").concat((f.modified || []).map((x) => x + " (modified)"));
  return list(all, (x) => h("code", {}, x));
}

function code(c) {
  const cs = c.code;
  if (!cs) return h("p", { class: "muted" }, "Not recorded.");
  const ahead = cs.upstream ? `${cs.upstream} (${cs.ahead || 0} ahead, ${cs.behind || 0} behind)` : "";
  const rows = [["Repository", cs.root + (cs.host ? " on " + cs.host : "")], ["Branch", cs.branch || "(detached)"],
    ["Commit", cs.head ? cs.head.slice(0, 12) : ""], ["Upstream", ahead], ["Uncommitted files", cs.uncommitted],
    ["Untracked files", cs.untracked], ["Recorded", cs.at ? ago(cs.at) : ""]];
  return h("dl", {}, rows.filter(([, v]) => v !== undefined && v !== "").map(([k, v]) => [h("dt", {}, k), h("dd", {}, h("code", {}, String(v)))]));
}

function promptBox(text) {
  const pre = h("pre", { class: "prompt", id: "prompt", tabindex: 0, "aria-label": "Continuation prompt" }, text);
  const btn = h("button", { type: "button", onclick: async () => {
    try { await navigator.clipboard.writeText(text); btn.textContent = "Copied"; } catch { btn.textContent = "Select the text to copy"; }
  } }, "Copy prompt");
  return [btn, pre];
}

// stepsChart draws each step as a bar from its start to its end (or now).
function stepsChart(c) {
  const steps = c.steps || [];
  if (!steps.length) return h("p", { class: "muted" }, "No steps.");
  const t = (s) => (s ? Date.parse(s) : NaN);
  const starts = steps.map((s) => t(s.started_at)).filter((x) => !isNaN(x));
  const t0 = starts.length ? Math.min(...starts) : now();
  const t1 = Math.max(now(), ...steps.map((s) => t(s.completed_at)).filter((x) => !isNaN(x)));
  const span = Math.max(1, t1 - t0), W = 300, rowH = 18, labelW = 110;
  const svg = svgEl("svg", { viewBox: `0 0 ${labelW + W} ${steps.length * rowH + 4}`, width: "100%", role: "img",
    "aria-label": `Steps over time: ${steps.filter((s) => s.status === "done" || s.status === "skipped").length} of ${steps.length} finished` });
  steps.forEach((s, i) => {
    const y = i * rowH + 2;
    const label = svgEl("text", { x: 0, y: y + 12 });
    label.textContent = (s.title || s.id).slice(0, 16);
    svg.append(label);
    const a = t(s.started_at), b = isNaN(t(s.completed_at)) ? (s.status === "in_progress" ? now() : NaN) : t(s.completed_at);
    const color = { done: "var(--bar)", skipped: "var(--p-ended)", failed: "var(--p-dead)", in_progress: "var(--p-busy)" }[s.status] || "var(--bar-bg)";
    const x = isNaN(a) ? labelW : labelW + ((a - t0) / span) * W;
    const w = isNaN(a) || isNaN(b) ? 4 : Math.max(3, ((b - a) / span) * W);
    const rect = svgEl("rect", { x, y: y + 2, width: w, height: rowH - 6, rx: 3, fill: color });
    const title = svgEl("title", {});
    title.textContent = `${s.title || s.id}: ${s.status}` + (isNaN(a) || isNaN(b) ? "" : `, ${Math.round((b - a) / 60000)} min`);
    rect.append(title);
    svg.append(rect);
  });
  return svg;
}

function svgEl(tag, attrs) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

// lifeChart plots events per hour over the loaded timeline, and the last beat.
function lifeChart(events, lastBeat) {
  const box = document.getElementById("life");
  if (!box) return;
  const times = events.map((e) => Date.parse(e.at)).filter((x) => !isNaN(x));
  if (lastBeat) times.push(Date.parse(lastBeat));
  if (!times.length) { box.replaceChildren(h("p", { class: "muted" }, "No signs of life recorded.")); return; }
  const t1 = Math.max(now(), ...times), t0 = Math.min(...times, t1 - 3600e3);
  const n = 24, W = 400, H = 60, bin = (t1 - t0) / n || 1, counts = new Array(n).fill(0);
  for (const x of times) counts[Math.min(n - 1, Math.floor((x - t0) / bin))]++;
  const top = Math.max(...counts);
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H + 14}`, width: "100%", role: "img",
    "aria-label": `${times.length} signs of life between ${new Date(t0).toISOString()} and ${new Date(t1).toISOString()}` });
  counts.forEach((c, i) => {
    const bh = top ? (c / top) * H : 0;
    svg.append(svgEl("rect", { x: i * (W / n) + 1, y: H - bh, width: W / n - 2, height: bh, fill: "var(--p-busy)" }));
  });
  svg.append(svgEl("line", { x1: 0, y1: H, x2: W, y2: H, class: "axis" }));
  const l = svgEl("text", { x: 0, y: H + 12 }); l.textContent = ago(new Date(t0).toISOString());
  const r = svgEl("text", { x: W - 30, y: H + 12 }); r.textContent = "now";
  svg.append(l, r);
  box.replaceChildren(svg);
}

async function olderEvents() {
  const d = state.detail;
  if (!d || d.oldest <= 1) return;
  const from = Math.max(1, d.oldest - 50);
  const out = await api(`/ui/api/history?id=${encodeURIComponent(d.id)}&from=${from}&limit=${d.oldest - from}`);
  d.oldest = from;
  d.events = out.events.concat(d.events);
  const ol = document.getElementById("timeline");
  out.events.forEach((e, i) => { e.sentence = (out.sentences || [])[i]; });
  for (const e of out.events.slice().reverse()) ol.append(eventItem(e));
  document.getElementById("older").hidden = d.oldest <= 1;
  lifeChart(d.events, d.c.heartbeat && d.c.heartbeat.last_beat);
}

// eventItem is one sentence per event (what ckpt log says), who and when;
// the raw JSON sits behind a toggle.
function eventItem(e) {
  return h("li", {}, h("time", { class: "when", datetime: e.at }, new Date(e.at).toLocaleString()), " ",
    h("strong", {}, `#${e.seq}`), " ", e.sentence || e.type, " ", h("span", { class: "muted" }, "by " + ((e.actor && e.actor.agent) || "?")), " ",
    h("button", { type: "button", class: "link", "aria-label": `Preview revision ${e.seq}`, onclick: () => showPreview(state.detail.id, e.seq) }, "preview"), " ",
    e.data === undefined || e.data === null ? null :
      h("details", { class: "raw" }, h("summary", {}, "raw"), h("code", {}, JSON.stringify(e.data))));
}

function actions(c) {
  const form = (label, fields, onsubmit, danger) => h("form", { onsubmit: (e) => { e.preventDefault(); onsubmit(new FormData(e.target)); } },
    ...fields, h("button", { type: "submit", class: danger ? "danger" : "" }, label));
  const input = (name, label, attrs) => h("label", {}, label, h("input", { name, required: true, ...attrs }));
  return h("section", { class: "card actions", "aria-label": "Actions" },
    form("Take over", [input("agent", "New agent", { size: 14 })],
      (f) => act({ action: "takeover", id: c.id, agent: f.get("agent") }, `Hand ${c.id} to ${f.get("agent")}? The current state is archived.`), true),
    form("Mark abandoned", [], () => act({ action: "abandon", id: c.id }, `Mark ${c.id} abandoned?`), true),
    form("Preview restore", [input("rev", "Revision", { type: "number", min: 1, max: c.rev, size: 5 })],
      (f) => showPreview(c.id, Number(f.get("rev")))),
    form("Add note", [input("text", "Note", { size: 24 })], (f) => act({ action: "note", id: c.id, text: f.get("text") }, "Add this note?")),
    form("Tell the agent", [input("text", "Message (delivered at its next hook)", { size: 28, maxlength: 4000 })],
      (f) => act({ action: "tell", id: c.id, text: f.get("text") }, `Send this message to the agent working on ${c.id}?`)));
}

// act confirms, then runs an action; it says whether it was done.
async function act(body, question) {
  if (!confirm(question)) return false;
  try {
    const out = await api("/ui/api/action", body);
    setLive(true, out.archived_as ? `done; archived as ${out.archived_as}` : "done");
    if (state.view === "detail:" + body.id) await detail(body.id);
    return true;
  } catch (err) {
    alert(err.message);
    return false;
  }
}

async function onChangeDetail(c) {
  const d = state.detail;
  if (!d || c.id !== d.id) return;
  if (c.kind === "deleted") { document.getElementById("main").prepend(h("p", { class: "error", role: "alert" }, "This checkpoint was deleted.")); return; }
  const kept = keepInput();
  await detail(d.id);
  kept();
}

// keepInput notes what the visitor typed in the page's forms, which field
// has the focus and the scroll, and returns the function that puts them
// back after a redraw: an update must not wipe a note being written.
function keepInput() {
  const key = (el) => [...document.querySelectorAll("main form")].indexOf(el.form) + ":" + el.name;
  const values = new Map();
  for (const el of document.querySelectorAll("main form input[name], main form textarea[name]")) if (el.value) values.set(key(el), el.value);
  const a = document.activeElement;
  const focus = a && a.form && a.name ? key(a) : null;
  const x = window.scrollX, y = window.scrollY;
  return () => {
    for (const el of document.querySelectorAll("main form input[name], main form textarea[name]")) {
      const k = key(el);
      if (values.has(k)) el.value = values.get(k);
      if (k === focus) el.focus({ preventScroll: true });
    }
    window.scrollTo(x, y);
  };
}

// ---- routing and the change feed ----

function route() {
  const m = location.pathname.match(/^\/c\/(.+)$/);
  const p = m ? detail(decodeURIComponent(m[1])) : overview();
  p.catch((err) => {
    if (err.message !== "signed out") document.getElementById("main").replaceChildren(h("p", { class: "error", role: "alert" }, err.message));
  });
}

// refresh reads the page's data again without redrawing the filters.
async function refresh() {
  try {
    if (state.view === "overview") await refreshRows();
    else if (state.detail) await detail(state.detail.id);
  } catch { /* the next change or open tries again */ }
}

// refreshRows reads every row the page has loaded again, a page of 500 at a
// time up to the last one loaded ("Load more" may have loaded thousands),
// and then swaps them in at once: after a reconnect every row stays and is
// brought up to date, as are the counts and the inbox.
async function refreshRows() {
  const until = state.next; // "": the page had loaded every row
  const fresh = new Map();
  let after = "", counts = null, next = "", damaged = [];
  const limit = String(Math.min(500, Math.max(100, state.rows.size)));
  for (;;) {
    const out = await api("/ui/api/overview?" + filterQuery(state.filters, { limit, after }));
    if (state.view !== "overview") return;
    if (counts === null) counts = out.counts || {};
    for (const row of out.rows) fresh.set(row.id, row);
    damaged = damaged.concat(out.damaged || []);
    next = out.next || "";
    if (!next || (until && next >= until)) break;
    after = next;
  }
  if (until && state.next !== until && next) {
    // "Load more" ran meanwhile: keep what it loaded past what was read.
    for (const [id, row] of state.rows) if (id > next) fresh.set(id, row);
    next = state.next;
  }
  state.rows.clear();
  for (const [id, row] of fresh) state.rows.set(id, row);
  showCounts(counts);
  addRows({ rows: [], next, damaged });
  await refreshInbox();
}

// connect opens the event stream once, from the cursor of the first data
// the page read, so nothing written in between is missed; the browser's own
// reconnects resume with Last-Event-ID.
let stream = null;
function connect(cursor) {
  if (stream) return;
  const es = new EventSource("/ui/api/events" + (cursor ? "?from=" + encodeURIComponent(cursor) : ""));
  stream = es;
  // Opening (and reopening) the stream refreshes what the page shows: a
  // presence that moved before the stream opened is not missed.
  es.onopen = () => {
    setLive(true, "live");
    refresh();
  };
  es.onerror = () => setLive(false, "reconnecting…");
  const onChange = (ev) => {
    const c = JSON.parse(ev.data);
    if (state.view === "overview") { onChangeOverview(c); refreshInboxSoon(); }
    else onChangeDetail(c);
  };
  es.addEventListener("change", onChange);
  es.addEventListener("presence", onChange); // presence moved with no write
}

document.addEventListener("click", (e) => {
  const a = e.target.closest("a");
  if (!a || a.target || e.metaKey || e.ctrlKey || e.shiftKey || a.origin !== location.origin) return;
  if ((a.getAttribute("href") || "").startsWith("#")) return; // the skip link
  if (a.pathname === "/" || a.pathname.startsWith("/c/")) {
    e.preventDefault();
    history.pushState(null, "", a.pathname + a.search);
    route();
    document.getElementById("main").focus();
  }
});
window.addEventListener("popstate", route);
initInbox({ h, api, ago, filters: () => state.filters });
initRevision({ api, act });
initBulk({ api, filters: () => state.filters, refresh: () => refresh() });
setInterval(() => {
  for (const t of document.querySelectorAll("time[data-ago]")) {
    const text = ago(t.dataset.ago);
    if (t.textContent !== text) t.textContent = text; // no layout for a text that stays
  }
}, 5000);
route();
