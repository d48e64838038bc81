// Helpers every module of the dashboard shares: building elements, the
// server's clock and the words and marks of a presence.

// h builds an element: h("a", {href: "/"}, "text", child…).
export function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "style") el.style.cssText = v; // CSSOM: allowed by the page's CSP
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === undefined || kid === null || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

export const clock = { skew: 0 };

// now is the server's clock, so "last seen" does not depend on this machine's.
export function now() { return Date.now() + clock.skew; }

export function ago(iso) {
  if (!iso) return "never";
  const s = Math.max(0, Math.round((now() - Date.parse(iso)) / 1000));
  if (s < 60) return s + " s ago";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min ago";
  return Math.floor(s / 86400) + " d ago";
}

export const PRESENCE_ORDER = ["waiting", "blocked", "dead", "stale", "failed", "warn", "busy", "working", "ended"];

// rank orders presence words: what needs a person first.
export function rank(w) { const i = PRESENCE_ORDER.indexOf(w); return i < 0 ? 100 : i; }

export function presenceClass(p) {
  return ["working", "busy", "waiting", "blocked", "ended", "dead", "warn", "stale", "failed", "done"].includes(p) ? "p-" + p : "p-other";
}

export function badge(row) {
  const title = row.presence_why ? row.presence + ": " + row.presence_why : row.presence;
  return h("span", { class: "badge " + presenceClass(row.presence), title }, row.presence);
}

export function progress(p) {
  const pct = Math.round(p.percent || 0);
  return h("div", { class: "progress" },
    h("div", { class: "track", role: "progressbar", "aria-valuemin": 0, "aria-valuemax": 100, "aria-valuenow": pct,
      "aria-label": `${p.done} of ${p.total} done` },
      h("div", { class: "fill", style: `width:${pct}%` })),
    h("span", { class: "num" }, `${p.done}/${p.total} ${pct}%`));
}

export function agentName(a) { return (a && (a.name || a.id)) || "-"; }
