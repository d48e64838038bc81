// Bulk actions on the filtered set: the overview's filters pick the
// checkpoints, the visitor picks an action, "Preview" asks the server what
// would happen to each ("N checkpoints will be marked done", what is
// skipped and why), and only the button under that preview acts — on the
// very IDs previewed, each checked again by the server — and then every
// checkpoint's result is shown.

import { h } from "./dom.js";
import { say } from "./announce.js";

const ACTIONS = [
  ["tell", "Tell each agent", "told your message"],
  ["note", "Add a note", "given your note"],
  ["done", "Mark done", "marked done"],
  ["abandon", "Mark abandoned", "marked abandoned"],
  ["archive", "Archive", "archived"],
  ["unblock", "Clear blockers", "unblocked"],
];
const words = (a) => ACTIONS.find((x) => x[0] === a) || [a, a, a];

let deps = null; // { api, filters, refresh }

export function initBulk(d) { deps = d; }

// bulkSection is the form under the filters; only a visitor who may write
// sees it.
export function bulkSection() {
  const select = h("select", { name: "action", id: "bulk-action" }, ACTIONS.map(([v, label]) => h("option", { value: v }, label)));
  return h("section", { class: "bulk", "aria-labelledby": "bulk-title" },
    h("h3", { id: "bulk-title" }, "Act on every checkpoint these filters pick"),
    h("form", { id: "bulk-form", onsubmit: (e) => { e.preventDefault(); preview(new FormData(e.target)); } },
      h("label", {}, "Action", select),
      h("label", {}, "Message, note or reason", h("input", { name: "text", id: "bulk-text", size: 28, maxlength: 4000 })),
      h("button", { type: "submit" }, "Preview")),
    h("div", { id: "bulk-preview", hidden: true }));
}

async function preview(form) {
  const action = String(form.get("action")), text = String(form.get("text") || "");
  const box = document.getElementById("bulk-preview");
  box.hidden = false;
  box.replaceChildren(h("p", { class: "muted" }, "Counting…"));
  let out;
  try {
    out = await deps.api("/ui/api/bulk", { action, filters: deps.filters(), text, dry_run: true });
  } catch (err) {
    box.replaceChildren(h("p", { class: "error", role: "alert" }, err.message));
    return;
  }
  const will = out.items.filter((it) => it.outcome === "will");
  const others = out.items.filter((it) => it.outcome !== "will");
  const [, label, done] = words(action);
  const n = will.length;
  box.replaceChildren(
    h("p", { id: "bulk-count", class: "bulk-count" }, `${n} checkpoint${n === 1 ? "" : "s"} will be ${done}.`),
    others.length ? h("p", { class: "muted" }, `${others.length} picked by the filters will be left alone: ${reasons(others)}.`) : null,
    list(will.map((it) => it.id)),
    h("div", { class: "bulk-actions" },
      n ? h("button", { type: "button", class: "danger", id: "bulk-run", onclick: () => run(action, text, will.map((it) => it.id)) },
        `${label}: ${n} checkpoint${n === 1 ? "" : "s"}`) : null,
      h("button", { type: "button", onclick: () => { box.hidden = true; box.replaceChildren(); } }, "Cancel")));
  document.getElementById("bulk-count").focus?.();
}

async function run(action, text, ids) {
  const box = document.getElementById("bulk-preview");
  const btn = document.getElementById("bulk-run");
  if (btn) btn.disabled = true;
  let out;
  try {
    out = await deps.api("/ui/api/bulk", { action, filters: deps.filters(), text, ids });
  } catch (err) {
    box.replaceChildren(h("p", { class: "error", role: "alert" }, err.message));
    return;
  }
  const c = out.counts || {};
  const [, , done] = words(action);
  const summary = `${c.done || 0} ${done}` + ["skipped", "forbidden", "failed"].filter((k) => c[k]).map((k) => `, ${c[k]} ${k}`).join("") + ".";
  const notDone = out.items.filter((it) => it.outcome !== "done");
  box.replaceChildren(
    h("p", { id: "bulk-result", class: "bulk-count" }, summary),
    notDone.length ? h("ul", { class: "bulk-list" }, notDone.slice(0, 50).map((it) => h("li", {}, h("a", { href: "/c/" + it.id }, it.id), ` ${it.outcome}: ${it.reason}`))) : null,
    h("button", { type: "button", onclick: () => { box.hidden = true; box.replaceChildren(); } }, "Close"));
  say(`Bulk action: ${summary}`);
  const input = document.getElementById("bulk-text");
  if (input) input.value = ""; // not the reason of the next action by accident
  deps.refresh();
}

function reasons(items) {
  const by = new Map();
  for (const it of items) {
    const k = it.outcome + (it.reason ? " (" + it.reason.replace(/^it /, "") + ")" : "");
    by.set(k, (by.get(k) || 0) + 1);
  }
  return [...by].map(([k, n]) => `${n} ${k}`).join("; ");
}

function list(ids) {
  if (!ids.length) return null;
  const shown = ids.slice(0, 12);
  return h("p", { class: "bulk-ids muted" }, shown.join(", "), ids.length > shown.length ? ` and ${ids.length - shown.length} more` : "");
}
