// Preview a revision before restoring it: the state the checkpoint had at
// that revision, and what restoring it would change in the state now, field
// by field; then restore, or close. The preview survives the page's
// redraws (a change of the checkpoint shows the difference to the new now).

import { h, badge, progress } from "./dom.js";

let deps = null; // { api, act }
let open = null; // { id, rev } of the preview shown

// initRevision takes the page's api and act (confirm, then run an action).
export function initRevision(d) { deps = d; }

// previewSlot is where the checkpoint page shows a preview.
export function previewSlot() {
  return h("section", { class: "card preview", id: "revision-preview", "aria-label": "Revision preview", hidden: true });
}

// showPreview reads revision rev of id and shows it.
export async function showPreview(id, rev) {
  open = { id, rev };
  const slot = document.getElementById("revision-preview");
  if (!slot) return;
  let out;
  try {
    out = await deps.api(`/ui/api/revision?id=${encodeURIComponent(id)}&rev=${rev}`);
  } catch (err) {
    slot.hidden = false;
    slot.replaceChildren(h("h2", {}, `Revision ${rev}`), h("p", { class: "error", role: "alert" }, err.message), closeButton());
    return;
  }
  if (!open || open.id !== id || open.rev !== rev) return;
  slot.hidden = false;
  slot.replaceChildren(h("h2", { id: "preview-title", tabindex: -1 }, `Revision ${rev} of ${out.current_rev}`),
    stateAt(out.state),
    changes(out),
    h("div", { class: "preview-actions" },
      out.can_act ? h("button", { type: "button", class: "danger", onclick: () => {
        deps.act({ action: "restore", id, rev }, `Bring ${id} back to revision ${rev}? ${out.changes.length + (out.more || 0)} field(s) change; the history keeps everything.`)
          .then((done) => { if (done) closePreview(); });
      } }, `Restore revision ${rev}`) : null,
      closeButton()));
}

// reopenPreview shows again, after a redraw of id's page, the preview that
// was open.
export function reopenPreview(id) {
  if (open && open.id === id) showPreview(id, open.rev);
  else open = null;
}

export function closePreview() {
  open = null;
  const slot = document.getElementById("revision-preview");
  if (slot) { slot.hidden = true; slot.replaceChildren(); }
}

function closeButton() {
  return h("button", { type: "button", onclick: closePreview }, "Close preview");
}

function stateAt(c) {
  const steps = (c.steps || []).map((s) => `${s.title || s.id}: ${s.status}`).join(", ");
  const blockers = (c.blockers || []).filter((b) => !b.cleared_at).map((b) => b.text).join("; ");
  const rows = [["Title", c.title], ["Status", c.status + (c.status_reason ? ` (${c.status_reason})` : "")],
    ["Current step", c.current_step], ["Agent", c.agent && (c.agent.name || c.agent.id)], ["Steps", steps], ["Blockers", blockers]];
  return h("div", { class: "preview-state" },
    h("h3", {}, "The state at that revision"),
    h("div", { class: "meta" }, badge({ presence: c.status }), progress(c.progress)),
    h("dl", { class: "why-card" }, rows.filter(([, v]) => v).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])));
}

function changes(out) {
  if (out.changes.length === 0) return h("p", { id: "preview-changes" }, out.rev === out.current_rev ? "This is the current revision: nothing to restore." : "Restoring it changes nothing in what is recorded.");
  return h("div", {},
    h("h3", {}, `Restoring it changes ${out.changes.length + (out.more || 0)} field${out.changes.length + (out.more || 0) === 1 ? "" : "s"}`),
    h("div", { class: "scroll" }, h("table", { class: "diff", id: "preview-changes" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Field"), h("th", { scope: "col" }, "Now"), h("th", { scope: "col" }, "After the restore"))),
      h("tbody", {}, out.changes.map((c) => h("tr", {},
        h("th", { scope: "row" }, h("code", {}, c.field)),
        h("td", { class: c.now ? "was" : "muted" }, c.now || "(none)"),
        h("td", { class: c.then ? "becomes" : "muted" }, c.then || "(none)")))))),
    out.more ? h("p", { class: "muted" }, `and ${out.more} more`) : null);
}
