// Reads every kind of content block with the official TypeScript SDK client and prints what it saw.
// Usage: node content.mjs <mcp url> <api key> <tool>...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { listAllTools } from "./list.mjs";

const [url, key, ...tools] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
const client = new Client({ name: "toolfront-ts-content", version: "1.0.0" });
await client.connect(transport);
await listAllTools(client); // the client then validates structuredContent against each outputSchema
const seen = {};
for (const name of tools) {
  const [tool, argument] = name.split("=");
  const result = await client.callTool({ name: tool, arguments: argument ? JSON.parse(argument) : {} });
  seen[name] = { isError: result.isError ?? false, content: result.content, structured: result.structuredContent ?? null };
}
await client.close();
console.log(JSON.stringify(seen));
