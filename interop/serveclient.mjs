// A client written with the official TypeScript SDK that drives `mcphost
// serve` for serve_test.go. It reads a plan (JSON) from its first argument,
// runs its steps in order and prints one JSON object with what each step
// saw. The plan:
//
//   {"transport": "stdio", "command": "...", "args": [...], "env": {...}}
//   {"transport": "http", "url": "...", "token": "..."}
//   "elicit": null (no elicitation capability) or a list of answers
//   (ElicitResult objects), used in order; "decline" when they run out.
//   "steps": [{"op": "list"}, {"op": "call", "name": "...", "args": {...}},
//             {"op": "waitFor", "tool": "...", "timeoutMs": 10000}]
//   waitFor lists the tools again after each notifications/tools/list_changed
//   until the tool is listed, and reports how many notifications came since
//   the start.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const plan = JSON.parse(process.argv[2]);
const out = { asked: [], steps: [] };

const capabilities = plan.elicit ? { elicitation: { form: {} } } : {};
const client = new Client({ name: "ts-interop", version: "1.32.2" }, { capabilities });

if (plan.elicit) {
  const answers = [...plan.elicit];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    out.asked.push({ message: req.params.message, requestedSchema: req.params.requestedSchema });
    return answers.length > 0 ? answers.shift() : { action: "decline" };
  });
}

let changes = 0; // not yet waited for
let notified = 0; // since the start
let wake = null;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  changes++;
  notified++;
  if (wake) wake();
});

let transport;
if (plan.transport === "http") {
  transport = new StreamableHTTPClientTransport(new URL(plan.url), {
    requestInit: { headers: { Authorization: `Bearer ${plan.token}` } },
  });
} else {
  transport = new StdioClientTransport({ command: plan.command, args: plan.args, env: plan.env, stderr: "inherit" });
}

try {
  await client.connect(transport);
  out.serverVersion = client.getServerVersion();
  out.instructions = client.getInstructions();
  for (const step of plan.steps) {
    switch (step.op) {
      case "list": {
        const res = await client.listTools();
        out.steps.push({ op: "list", tools: res.tools });
        break;
      }
      case "call": {
        const res = await client.callTool({ name: step.name, arguments: step.args ?? {} }, undefined, { timeout: 60000 });
        out.steps.push({ op: "call", name: step.name, result: res });
        break;
      }
      case "waitFor": {
        const deadline = Date.now() + (step.timeoutMs ?? 10000);
        let tools = (await client.listTools()).tools;
        while (!tools.some((t) => t.name === step.tool) && Date.now() < deadline) {
          if (changes === 0) {
            await new Promise((resolve) => {
              wake = resolve;
              setTimeout(resolve, deadline - Date.now());
            });
          }
          changes = 0;
          tools = (await client.listTools()).tools;
        }
        out.steps.push({ op: "waitFor", changes: notified, tools });
        break;
      }
      default:
        throw new Error(`unknown step ${step.op}`);
    }
  }
} catch (err) {
  out.error = String(err?.stack ?? err);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);
