// Calls a write that runs at once through the official TypeScript SDK's tasks client
// (client.experimental.tasks.callToolStream) as a task, which tools/list says the tool supports, and
// must get a task back. Prints one JSON line per stream message. The task is asked for explicitly:
// the SDK (1.32.2) asks by itself only for tools of the LAST tools/list page it read (each page
// replaces its cache), and the test stack lists 4 tools a page.
// Usage: node tasks_at_once.mjs <mcp url> <api key> <tool> <arguments json>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { listAllTools } from "./list.mjs";

const [url, key, tool, args] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
const client = new Client({ name: "toolfront-ts-tasks-at-once", version: "1.0.0" });
await client.connect(transport);
await listAllTools(client); // the SDK learns which tools take tasks (it then always asks for one)
const say = (message) => console.log(JSON.stringify(message));
const stream = client.experimental.tasks.callToolStream(
  { name: tool, arguments: JSON.parse(args) },
  undefined,
  { task: { ttl: 60000 } },
);
for await (const message of stream) {
  if (message.type === "taskCreated") say({ type: "taskCreated", task: message.task });
  else if (message.type === "taskStatus") say({ type: "taskStatus", status: message.task.status });
  else if (message.type === "result") say({ type: "result", result: message.result });
  else if (message.type === "error") say({ type: "error", message: String(message.error.message) });
}
await client.close();
process.exit(0);
