// Drives serve's team approval page in headless Chromium for
// serve/team_browser_test.go (through scripts/team-e2e.sh). Its argument
// is serve's origin. Each person logs in on the test OpenID provider's
// own form, in a browser context of their own. The Go test makes the
// calls; this script answers them. They take turns over standard input
// and output: the test writes a step ("PERSON ID" or "done"), and the
// script writes one line when the step is done. Any failure exits
// non-zero with the reason on standard error.
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const base = process.argv[2];
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

const browser = await chromium.launch({
  executablePath: process.env.WEB_E2E_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const passwords = { alice: "alice-pw", bob: "bob-pw" };

// login opens the team page in a fresh context: the page sends the
// browser to the issuer, whose form the person fills in, and the issuer
// sends it back logged in.
async function login(person) {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  const dialogs = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    d.dismiss();
  });
  await page.goto(base + "/approve/");
  if (new URL(page.url()).origin === base) {
    fail(`the page without a login stayed at ${page.url()}, want the issuer's login form`);
  }
  await page.locator("input[name=username]").fill(person);
  await page.locator("input[name=password]").fill(passwords[person]);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.waitForURL(base + "/approve/");
  const cookies = (await context.cookies(base + "/approve/")).filter((c) => c.name === "mcphost-approve");
  if (cookies.length !== 1 || !cookies[0].httpOnly || cookies[0].sameSite !== "Lax" || cookies[0].path !== "/approve/") {
    fail(`the page's session cookie: ${JSON.stringify(cookies)}`);
  }
  if ((await page.evaluate(() => document.cookie)) !== "") {
    fail("the session cookie is readable by scripts");
  }
  const who = await page.locator("p").first().textContent();
  if (!who.includes(person === "bob" ? "Bob Example" : "Alice Example")) {
    fail(`the page says ${JSON.stringify(who)}, not who logged in`);
  }
  return { context, page, dialogs };
}

try {
  for (;;) {
    const line = await step();
    if (line === "done") {
      break;
    }
    const [person, id] = line.split(" ");
    const { context, page, dialogs } = await login(person);
    const card = page.locator(`section#call-${id}`);
    if (person === "alice") {
      // Alice's call is routed to owners: her page does not show it, and
      // an answer sent with her session is refused.
      if ((await card.count()) !== 0 || (await page.locator("#none").count()) !== 1) {
        fail("Alice's page shows the call routed to owners");
      }
      const res = await context.request.post(base + "/approve/answer", {
        form: { id, decision: "approve", csrf: "forged" }, headers: { Origin: base }, maxRedirects: 0,
      });
      if (res.status() !== 403) {
        fail(`Alice's forged answer was answered ${res.status()}, want 403`);
      }
      say("alice sees none");
    } else {
      await card.waitFor();
      const text = await card.textContent();
      for (const want of ["set_value on rogue", "Alice Example", "routed to owners (four eyes)", "Tier T3"]) {
        if (!text.includes(want)) {
          fail(`the card does not say ${JSON.stringify(want)}: ${text}`);
        }
      }
      // Tier 3: the raw tool name is typed to approve.
      await card.locator("input[name=confirm]").fill("set_value");
      await card.getByRole("button", { name: "Approve once" }).click();
      await page.locator("#note", { hasText: "Approved" }).waitFor();
      if ((await page.locator(`section#call-${id}`).count()) !== 0) {
        fail("the approved call is still shown");
      }
      say("bob approved");
    }
    if (dialogs.length > 0) {
      fail(`the page opened dialogs: ${JSON.stringify(dialogs)}`);
    }
    await context.close();
  }
} finally {
  await browser.close();
}
