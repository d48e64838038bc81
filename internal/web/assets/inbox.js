// The inbox: what needs a person, most urgent first (waiting, blocked, dead,
// stale, failed), each with its reason and age, and for waiting and blocked
// work a reply box that tells the agent (delivered at its next hook). It is
// updated in place: items are matched by ID, so a reply being typed, the
// focus and the scroll survive every update.

import { entered } from "./announce.js";

let deps = null;
let notified = null; // IDs already seen in the inbox, for notifications
let states = null;   // id → state at the last draw, for announcements

// initInbox takes the page's helpers: h, api, ago and the current filters.
export function initInbox(d) { deps = d; }

export function inboxSection() {
  const { h } = deps;
  states = null; // a new list (filters may differ): announce only what changes after it

  const notify = "Notification" in window ? h("button", { type: "button", id: "notify", class: "notify", onclick: askNotify },
    Notification.permission === "granted" && localStorage.getItem("ckpt-notify") === "1" ? "Notifications on" : "Notify me") : null;
  return h("section", { class: "inbox", id: "inbox-section", "aria-labelledby": "inbox-title" },
    h("div", { class: "inbox-head" },
      h("h2", { id: "inbox-title" }, "Needs you"),
      h("ul", { class: "counts", id: "inbox-counts", "aria-label": "Needs you, by state" }),
      notify),
    h("ol", { class: "inbox-list", id: "inbox" }),
    h("p", { class: "muted", id: "inbox-empty", hidden: true }, "Nothing needs you: no agent is waiting, blocked, dead, stale or failed."),
    h("p", { class: "sr-only", id: "inbox-announce", role: "status", "aria-live": "polite" }));
}

async function askNotify(e) {
  if (Notification.permission !== "granted" && (await Notification.requestPermission()) !== "granted") return;
  const on = localStorage.getItem("ckpt-notify") !== "1";
  localStorage.setItem("ckpt-notify", on ? "1" : "0");
  e.target.textContent = on ? "Notifications on" : "Notify me";
}

let timer = null;
// refreshInboxSoon coalesces a burst of changes into one read.
export function refreshInboxSoon() {
  clearTimeout(timer);
  timer = setTimeout(refreshInbox, 250);
}

export async function refreshInbox() {
  if (!document.getElementById("inbox")) return;
  const f = deps.filters();
  const q = new URLSearchParams();
  if (f.prefix) q.set("prefix", f.prefix);
  if (f.parent) q.set("parent", f.parent);
  const out = await deps.api("/ui/api/inbox?" + q.toString());
  draw(out);
}

function draw(out) {
  const { h } = deps;
  const ol = document.getElementById("inbox");
  if (!ol) return;
  const old = new Map([...ol.children].map((li) => [li.dataset.id, li]));
  const lis = out.items.map((it) => {
    const li = old.get(it.id) || newItem(it);
    old.delete(it.id);
    update(li, it);
    return li;
  });
  for (const li of old.values()) li.remove();
  // Move only what is out of place: a moved element loses the focus.
  lis.forEach((li, i) => { if (ol.children[i] !== li) ol.insertBefore(li, ol.children[i] || null); });
  document.getElementById("inbox-empty").hidden = lis.length > 0;
  const counts = out.counts || {};
  document.getElementById("inbox-counts").replaceChildren(...["waiting", "blocked", "dead", "stale", "failed"]
    .filter((s) => counts[s]).map((s) => h("li", {}, h("span", { class: "badge p-" + s }, `${counts[s]} ${s}`))));
  notifyNew(out.items);
  announceEntered(out.items);
}

// announceEntered says which checkpoints entered a state that needs a
// person since the last draw (announce.js coalesces them).
function announceEntered(items) {
  const prev = states;
  states = new Map(items.map((it) => [it.id, it.state]));
  if (!prev) return;
  for (const it of items) if (prev.get(it.id) !== it.state) entered(it.id, it.state, it.reason);
}

function notifyNew(items) {
  const seen = new Set(items.map((it) => it.id + " " + it.state));
  if (notified && "Notification" in window && Notification.permission === "granted" && localStorage.getItem("ckpt-notify") === "1") {
    for (const it of items) {
      if (!notified.has(it.id + " " + it.state)) new Notification(`ckpt: ${it.id} is ${it.state}`, { body: it.reason || "", tag: it.id });
    }
  }
  notified = seen;
}

function newItem(it) {
  const { h } = deps;
  const li = h("li", { "data-id": it.id, class: "inbox-item" },
    h("div", { class: "inbox-line" },
      h("span", { class: "badge" }),
      h("a", { href: "/c/" + it.id, class: "inbox-id" }, it.id),
      h("span", { class: "muted inbox-agent" }),
      h("time", { class: "muted inbox-age" })),
    h("p", { class: "inbox-reason" }),
    h("p", { class: "muted inbox-pending", hidden: true }));
  if (it.can_tell) li.append(replyForm(it.id));
  return li;
}

function update(li, it) {
  const badge = li.querySelector(".badge");
  badge.className = "badge p-" + it.state;
  badge.textContent = it.state;
  li.querySelector(".inbox-agent").textContent = it.agent ? "· " + it.agent : "";
  const t = li.querySelector(".inbox-age");
  t.setAttribute("datetime", it.since);
  t.dataset.ago = it.since;
  t.textContent = deps.ago(it.since).replace(/ ago$/, "");
  li.querySelector(".inbox-reason").textContent = it.reason || (it.title ? it.title : "");
  const pending = li.querySelector(".inbox-pending");
  pending.hidden = !it.messages;
  pending.textContent = it.messages ? `${it.messages} message${it.messages > 1 ? "s" : ""} waiting for its next hook` : "";
  const form = li.querySelector("form.reply");
  if (!it.can_tell && form) form.remove();
  else if (it.can_tell && !form) li.append(replyForm(it.id));
}

function replyForm(id) {
  const { h } = deps;
  const input = h("textarea", { name: "text", rows: 1, maxlength: 4000, required: true, "aria-label": `Reply to ${id}`, placeholder: "Reply: the agent gets it at its next hook" });
  return h("form", { class: "reply", onsubmit: async (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    const btn = e.target.querySelector("button");
    btn.disabled = true;
    try {
      await deps.api("/ui/api/action", { action: "tell", id, text });
      input.value = "";
      announce(`Message sent to ${id}: delivered at its agent's next hook.`);
      refreshInboxSoon();
    } catch (err) {
      announce(`Not sent to ${id}: ${err.message}`);
    } finally {
      btn.disabled = false;
    }
  } }, input, h("button", { type: "submit" }, "Send"));
}

function announce(text) {
  const el = document.getElementById("inbox-announce");
  if (el) el.textContent = text;
}
