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

// Passkeys. When the page says approvals are signed (data-passkey), an
// approval first asks the authenticator to sign the call: the options come
// from the page's server, bound to the call and to the nonce its serve
// made, and the signed response goes with the answer, for serve to check.
// The enrollment page adds a passkey the same way. Errors are shown as
// text, never as markup.
(function () {
  const main = document.getElementById("main");
  const enroll = document.getElementById("enroll");

  function say(el, text) {
    if (el) {
      el.textContent = text;
      el.hidden = !text;
    }
  }

  async function post(path, fields) {
    const r = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
    const body = await r.json().catch(() => ({ error: "the page answered " + r.status }));
    if (!r.ok || body.error) {
      throw new Error(body.error || "the page answered " + r.status);
    }
    return body;
  }

  function supported() {
    return window.PublicKeyCredential && PublicKeyCredential.parseRequestOptionsFromJSON &&
      PublicKeyCredential.parseCreationOptionsFromJSON;
  }

  async function sign(options) {
    const cred = await navigator.credentials.get({
      publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options),
    });
    return JSON.stringify(cred.toJSON());
  }

  if (main && main.dataset.passkey === "on") {
    const problem = document.getElementById("passkey-error");
    document.addEventListener("submit", async (ev) => {
      const form = ev.target;
      const button = ev.submitter;
      if (!form.classList.contains("answer") || !button || !button.classList.contains("approve")) {
        return;
      }
      if (form.dataset.signed === "yes") {
        return; // signed: let it go
      }
      ev.preventDefault();
      say(problem, "");
      if (!supported()) {
        say(problem, "This browser cannot use passkeys: approve with mcphost approve, or in a current browser.");
        return;
      }
      try {
        const id = form.elements.id.value;
        const begun = await post("/passkey/begin", { csrf: form.elements.csrf.value, id: id });
        const response = await sign(begun.options);
        form.elements.passkey.value = JSON.stringify({ expires: begun.expires, response: JSON.parse(response) });
        form.dataset.signed = "yes";
        form.requestSubmit(button);
      } catch (e) {
        say(problem, "The passkey did not approve the call: " + e.message + ". The call still waits.");
      }
    });
  }

  if (enroll) {
    const form = document.getElementById("enroll-form");
    const status = document.getElementById("enroll-status");
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      if (!supported()) {
        say(status, "This browser cannot use passkeys.");
        return;
      }
      const fields = { csrf: form.elements.csrf.value, label: form.elements.label.value };
      try {
        let begun = await post("/enroll/begin", fields);
        if (begun.confirm) {
          say(status, "Approve with a passkey enrolled already …");
          const confirmResponse = await sign(begun.confirm);
          begun = await post("/enroll/begin", Object.assign({}, fields, { confirmToken: begun.confirmToken, confirmResponse: confirmResponse }));
        }
        const cred = await navigator.credentials.create({
          publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(begun.options),
        });
        const done = await post("/enroll/finish", Object.assign({}, fields, { token: begun.token, response: JSON.stringify(cred.toJSON()) }));
        say(status, "Enrolled: " + done.enrolled + ". Approvals on the approval page are now signed with it.");
        status.dataset.done = "yes";
      } catch (e) {
        say(status, "Not enrolled: " + e.message);
      }
    });
  }
})();
