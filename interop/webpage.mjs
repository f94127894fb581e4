// Drives mcphost's approval page in headless Chromium for
// cmd/mcphost/webpage_test.go (through scripts/web-e2e.sh). Its argument
// is the page's link. The Go test makes the calls; this script answers
// them on the page. They take turns over standard input and output: the
// test writes a step's name once it has started the step's call, and the
// script writes one line when the step is done. Any failure exits non-zero
// with the reason on standard error.
import { request } from "node:http";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const link = process.argv[2];
// --passkey: the browser has a virtual authenticator (Chromium's DevTools
// WebAuthn domain) with user verification, as a platform passkey would.
const withPasskey = process.argv.includes("--passkey");
const base = new URL(link).origin;
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function fail(msg) {
  throw new Error(msg);
}

async function step() {
  const { value, done } = await lines.next();
  return done ? "done" : value.trim();
}

function say(line) {
  process.stdout.write(line + "\n");
}

const context = await chromium.launchPersistentContext(process.env.WEB_E2E_PROFILE, {
  executablePath: process.env.WEB_E2E_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const dialogs = [];
const page = context.pages()[0] || (await context.newPage());
try {
  page.setDefaultTimeout(15000);
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    d.dismiss();
  });
  if (withPasskey) {
    const cdp = await context.newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true,
        isUserVerified: true, automaticPresenceSimulation: true,
      },
    });
  }

  // The link sets the cookie and leads to the page without the secret.
  await page.goto(link);
  if (page.url() !== base + "/") {
    fail(`after the link the address is ${page.url()}, want ${base}/`);
  }
  const cookies = (await context.cookies(base)).filter((c) => c.name.startsWith("mcphost-approve-"));
  if (cookies.length !== 1 || !cookies[0].httpOnly || cookies[0].sameSite !== "Strict" || cookies[0].path !== "/") {
    fail(`the page's cookie: ${JSON.stringify(cookies)}`);
  }
  if ((await page.evaluate(() => document.cookie)) !== "") {
    fail("the session cookie is readable by scripts");
  }
  await page.locator("#status", { hasText: "Connected to mcphost serve" }).waitFor();
  say("opened");

  const card = (tool) => page.locator(".card").filter({ has: page.locator(".f-tool code", { hasText: tool }) });
  const note = (text) => page.locator("#notes li", { hasText: text }).first().waitFor();

  // waitLive waits for the call to tool to appear without the page being
  // loaded again: it comes in through the event stream.
  async function waitLive(tool) {
    await page.evaluate(() => {
      window.stillHere = true;
    });
    await card(tool).waitFor();
    if (!(await page.evaluate(() => window.stillHere === true))) {
      fail(`the page was reloaded to show ${tool}`);
    }
    return card(tool);
  }

  // The card of a call to tool whose arguments hold text.
  const cardWith = (tool, text) => card(tool).filter({ has: page.locator(".args", { hasText: text }) });

  for (;;) {
    const line = await step();
    if (line === "done") {
      break;
    }
    // A step may name the argument text of the call it answers.
    const [s, arg] = line.split(" ");
    switch (s) {
      case "allow-once": {
        const c = await waitLive("drop_table");
        for (const [sel, want] of [[".f-server", "web"], [".f-class", "destructive"], [".f-tier", "T2"], [".f-client", "web-test-client 1 through mcphost serve"]]) {
          const got = (await c.locator(sel).textContent()).trim();
          if (got !== want) {
            fail(`${sel} shows ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
          }
        }
        if (!(await c.locator(".why").textContent()).includes("destructive")) {
          fail("the card does not say why it asks");
        }
        if ((await c.locator(".args").textContent()).indexOf('"users"') < 0) {
          fail("the card does not show the arguments");
        }
        await c.getByRole("button", { name: "Allow once" }).click();
        await note("Allowed web/drop_table (once).");
        if ((await card("drop_table").count()) !== 0) {
          fail("the allowed call is still shown");
        }
        say("allowed");
        break;
      }
      case "deny": {
        const c = await waitLive("drop_table");
        await c.locator("input[name=reason]").fill("not on a Friday");
        await c.getByRole("button", { name: "Deny" }).click();
        await note("Denied web/drop_table: not on a Friday");
        say("denied");
        break;
      }
      case "hostile": {
        const name = "purge<script>alert(1)</script>";
        const c = await waitLive(name);
        const tool = await c.locator(".f-tool code").textContent();
        if (tool !== name) {
          fail(`the raw tool name shows as ${JSON.stringify(tool)}`);
        }
        const title = await c.locator(".f-title").textContent();
        if (!title.includes("<img src=x onerror=alert(2)>\\u202eTidy")) {
          fail(`the title shows as ${JSON.stringify(title)}`);
        }
        const text = await c.textContent();
        for (const want of ["</script><script>alert(5)</script>", '"/home/\\u202eexe.txt"']) {
          if (!text.includes(want)) {
            fail(`the card lacks ${JSON.stringify(want)} as text`);
          }
        }
        if (text.includes("\u202e")) {
          fail("a bidi override reached the page raw");
        }
        const counts = await page.evaluate(() => ({
          scripts: document.scripts.length,
          imgs: document.images.length,
          iframes: document.querySelectorAll("iframe").length,
        }));
        if (counts.scripts !== 1 || counts.imgs !== 0 || counts.iframes !== 0) {
          fail(`the server's text became elements: ${JSON.stringify(counts)}`);
        }
        // The long value is cut, its whole one click away.
        const more = c.locator("details", { has: page.locator(".full") }).first();
        if (await more.locator(".full").isVisible()) {
          fail("the long value is shown whole at first");
        }
        await more.locator("summary").click();
        const whole = await more.locator(".full").textContent();
        // A megabyte of "<script>alert(6)</script>" and a bidi override,
        // the override shown as its escape (six characters).
        if (!(await more.locator(".full").isVisible()) || whole.length < 1000000 ||
            !whole.includes("<script>alert(6)</script>\\u202e<script>")) {
          fail(`the whole value is not shown on a click (${whole.length} characters)`);
        }
        await c.locator("input[name=reason]").fill("hostile");
        await c.getByRole("button", { name: "Deny" }).click();
        await note("Denied web/purge<script>alert(1)</script>: hostile");
        if (dialogs.length > 0) {
          fail(`the server's text ran script: ${dialogs.join(", ")}`);
        }
        say("hostile shown as text");
        break;
      }
      case "tier3": {
        const c = await waitLive("wipe_all");
        if ((await c.locator(".f-tier").textContent()).trim() !== "T3") {
          fail("wipe_all is not shown at tier 3");
        }
        await c.getByRole("button", { name: "Allow once" }).click();
        await note("type wipe_all exactly");
        if ((await card("wipe_all").count()) !== 1) {
          fail("the tier-3 call left without its name typed");
        }
        await card("wipe_all").locator("input[name=typed]").fill("wipe_all");
        await card("wipe_all").getByRole("button", { name: "Allow once" }).click();
        await note("Allowed web/wipe_all (once).");
        say("tier 3 needed the name");
        break;
      }
      case "forged": {
        const c = await waitLive("drop_table");
        const form = {
          id: await c.locator("input[name=id]").inputValue(),
          args: await c.locator("input[name=args]").inputValue(),
          csrf: await c.locator("input[name=csrf]").inputValue(),
          action: "once",
        };
        const cookie = (await context.cookies(base)).find((k) => k.name.startsWith("mcphost-approve-"));
        const post = (body, headers) => fetch(base + "/answer", {
          method: "POST", redirect: "manual", body: new URLSearchParams(body),
          headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        }).then((r) => r.status);
        const tries = {
          "no cookie": await post(form, {}),
          "a foreign Origin": await post(form, { cookie: `${cookie.name}=${cookie.value}`, origin: "http://evil.example" }),
          // A name rebound to the page's address (DNS rebinding): a
          // browser would send that name as the Host.
          "a foreign Host": await new Promise((resolve, reject) => {
            const u = new URL(base);
            const req = request({
              host: "127.0.0.1", port: u.port, path: "/answer", method: "POST",
              headers: { host: "rebound.example:" + u.port, cookie: `${cookie.name}=${cookie.value}`, "content-type": "application/x-www-form-urlencoded" },
            }, (res) => { res.resume(); resolve(res.statusCode); });
            req.on("error", reject);
            req.end(new URLSearchParams(form).toString());
          }),
          "a wrong CSRF token": await page.evaluate(async (f) => {
            const r = await fetch("/answer", { method: "POST", redirect: "manual", body: new URLSearchParams({ ...f, csrf: "0".repeat(64) }) });
            return r.status;
          }, form),
        };
        for (const [what, status] of Object.entries(tries)) {
          const want = what === "a foreign Host" ? 421 : 403; // 421: not this page's name
          if (status !== want) {
            fail(`an answer with ${what} got ${status}, want ${want}`);
          }
        }
        await page.reload();
        if ((await card("drop_table").count()) !== 1) {
          fail("the call no longer waits after the forged answers");
        }
        say("forged answers refused");
        break;
      }
      case "tier3-unsigned": {
        // No passkey is enrolled: the approval goes unsigned.
        const c = await waitLive("wipe_all");
        if ((await page.locator("#main[data-passkey=on]").count()) !== 0) {
          fail("the page signs approvals with no passkey enrolled");
        }
        await c.locator("input[name=typed]").fill("wipe_all");
        await c.getByRole("button", { name: "Allow once" }).click();
        await note("Allowed web/wipe_all (once).");
        say("sent unsigned");
        break;
      }
      case "enroll": {
        await page.goto(base + "/enroll");
        await page.locator("input[name=label]").fill("test key <b>1</b>");
        await page.getByRole("button", { name: "Enroll a passkey" }).click();
        await page.locator("#enroll-status[data-done=yes]").waitFor();
        await page.goto(base + "/");
        await page.locator("#main[data-passkey=on]").waitFor();
        await note("Enrolled the passkey");
        say("enrolled");
        break;
      }
      case "forged-passkey": {
        // A proof the page did not get from the authenticator: serve
        // checks it, refuses it, and the call waits again.
        const c = cardWith("wipe_all", arg);
        await c.waitFor();
        await c.locator("input[name=typed]").fill("wipe_all");
        await c.locator("form").evaluate((f) => {
          f.elements.passkey.value = JSON.stringify({
            expires: new Date(Date.now() + 60000).toISOString(),
            response: { id: "AAAA", rawId: "AAAA", type: "public-key", response: { clientDataJSON: "e30", authenticatorData: "AAAA", signature: "AAAA" } },
          });
          f.dataset.signed = "yes";
        });
        await c.getByRole("button", { name: "Allow once" }).click();
        await note("passkey approval was refused");
        await cardWith("wipe_all", arg).waitFor();
        await cardWith("wipe_all", arg).locator("input[name=reason]").fill("forged");
        await cardWith("wipe_all", arg).getByRole("button", { name: "Deny" }).click();
        await note("Denied web/wipe_all: forged");
        say("forged passkey refused");
        break;
      }
      case "passkey-tier3": {
        const c = cardWith("wipe_all", arg);
        await c.waitFor();
        const allowed = () => page.evaluate(() => Array.from(document.querySelectorAll("#notes li"))
          .filter((li) => li.textContent.includes("Allowed web/wipe_all (once).")).length);
        const before = await allowed();
        await c.locator("input[name=typed]").fill("wipe_all");
        await c.getByRole("button", { name: "Allow once" }).click();
        await page.waitForFunction((n) => Array.from(document.querySelectorAll("#notes li"))
          .filter((li) => li.textContent.includes("Allowed web/wipe_all (once).")).length > n, before);
        if ((await page.locator("#passkey-error").isVisible())) {
          fail("the passkey did not sign: " + (await page.locator("#passkey-error").textContent()));
        }
        say("signed");
        break;
      }
      case "deny-wipe": {
        const c = cardWith("wipe_all", arg);
        await c.waitFor();
        await c.locator("input[name=reason]").fill("once was enough");
        await c.getByRole("button", { name: "Deny" }).click();
        await note("Denied web/wipe_all: once was enough");
        say("denied");
        break;
      }
      default:
        fail(`unknown step ${s}`);
    }
  }
} catch (e) {
  // What the page showed when it failed, to read beside the error.
  process.stderr.write(`--- ${page.url()}\n${await page.locator("body").innerText().catch(() => "")}\n---\n`);
  throw e;
} finally {
  await context.close();
}
