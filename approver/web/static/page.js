// The approval page's only script: it listens for changes and brings in
// the calls and notes the server rendered. It never builds markup from
// text: it moves nodes the server's template made (whose every string is
// escaped), and keeps the cards already shown as they are, so what the
// person types into one is not lost when another call arrives.
"use strict";
(function () {
  const cards = document.getElementById("cards");
  if (!cards) {
    return;
  }
  let busy = false;
  let again = false;

  function swap(fresh, id) {
    const now = document.getElementById(id);
    const next = fresh.getElementById(id);
    if (now && next) {
      now.replaceWith(document.importNode(next, true));
    }
  }

  function merge(fresh) {
    const list = fresh.getElementById("cards");
    if (!list) {
      return;
    }
    const want = new Set();
    for (const c of list.children) {
      want.add(c.id);
      if (!document.getElementById(c.id)) {
        cards.appendChild(document.importNode(c, true));
      }
    }
    for (const c of Array.from(cards.children)) {
      if (!want.has(c.id)) {
        c.remove();
      }
    }
    swap(fresh, "status");
    swap(fresh, "notes");
  }

  async function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      const r = await fetch("/cards", { credentials: "same-origin", cache: "no-store" });
      if (r.ok) {
        merge(new DOMParser().parseFromString(await r.text(), "text/html"));
      }
    } catch (e) {
      // the next event tries again
    } finally {
      busy = false;
      if (again) {
        again = false;
        refresh();
      }
    }
  }

  const events = new EventSource("/events");
  events.onmessage = refresh;
})();
