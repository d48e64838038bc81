// Announcements for a screen reader: a checkpoint that starts to need a
// person (waiting, blocked, dead, failed) is said in the page's polite
// live region. Changes are coalesced: what arrives within a couple of
// seconds is one sentence, and many at once are counted, not listed, so a
// busy fleet never floods the listener.

import { h } from "./dom.js";

// ANNOUNCED are the states worth interrupting a listener for.
export const ANNOUNCED = new Set(["waiting", "blocked", "dead", "failed"]);

const WINDOW_MS = 2000; // changes within this are one announcement
const LIST_MAX = 3;     // more than this are counted by state

let queue = [];
let timer = null;

// entered notes that checkpoint id entered state (with why); it is said
// with whatever else enters a state within the window.
export function entered(id, state, why) {
  if (!ANNOUNCED.has(state)) return;
  queue = queue.filter((q) => q.id !== id);
  queue.push({ id, state, why });
  if (!timer) timer = setTimeout(flush, WINDOW_MS);
}

function flush() {
  timer = null;
  const q = queue;
  queue = [];
  if (q.length === 0) return;
  if (q.length === 1) {
    const { id, state, why } = q[0];
    say(`${id} is now ${state}${why ? ": " + why : ""}.`);
    return;
  }
  if (q.length <= LIST_MAX) {
    say(`${q.length} checkpoints need you: ${q.map((x) => `${x.id} is ${x.state}`).join(", ")}.`);
    return;
  }
  const by = new Map();
  for (const x of q) by.set(x.state, (by.get(x.state) || 0) + 1);
  say(`${q.length} checkpoints need you: ${[...by].map(([s, n]) => `${n} ${s}`).join(", ")}.`);
}

// say puts text in the live region; the same text twice is said twice.
export function say(text) {
  let el = document.getElementById("announce");
  if (!el) {
    el = h("p", { id: "announce", class: "sr-only", role: "status", "aria-live": "polite" });
    document.body.append(el);
  }
  el.textContent = el.textContent === text ? text + " " : text;
}
