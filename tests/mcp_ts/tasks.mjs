// Drives a held call through the official TypeScript SDK's tasks client (client.experimental.tasks):
// the call becomes a task, the SDK polls it while the Python test decides, and prints each message.
// Usage: node tasks.mjs <mcp url> <api key> <sku> <decision: approve|reject|cancel>
// Prints one JSON line per stream message; reads one line on stdin (the decision made) after the
// task is created.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { listAllTools } from "./list.mjs";

const [url, key, sku, decision] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
const client = new Client({ name: "toolfront-ts-tasks", version: "1.0.0" });
await client.connect(transport);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (message) => console.log(JSON.stringify(message));

const tools = await listAllTools(client);
const execution = tools.tools.find((tool) => tool.name === "catalogue-delete_product")?.execution ?? null;
say({ type: "listed", execution, capabilities: client.getServerCapabilities()?.tasks ?? null });

const stream = client.experimental.tasks.callToolStream(
  { name: "catalogue-delete_product", arguments: { sku } },
  undefined,
  { task: { ttl: 60000 } },
);
for await (const message of stream) {
  if (message.type === "taskCreated") {
    say({ type: "taskCreated", task: message.task });
    await lines.next(); // the test has decided (approve or reject) or wants us to cancel
    if (decision === "cancel") {
      const cancelled = await client.experimental.tasks.cancelTask(message.task.taskId);
      say({ type: "cancelled", task: cancelled });
    }
  } else if (message.type === "taskStatus") {
    say({ type: "taskStatus", status: message.task.status, statusMessage: message.task.statusMessage });
  } else if (message.type === "result") {
    say({ type: "result", result: message.result });
  } else if (message.type === "error") {
    say({ type: "error", message: String(message.error.message) });
  }
}
await client.close();
process.exit(0);
