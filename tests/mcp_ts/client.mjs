// Drives toolfront's /mcp with the official TypeScript SDK client and prints what it saw as JSON.
// Usage: node client.mjs <mcp url> <api key> <sku>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { listAllTools } from "./list.mjs";

const [url, key, sku] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
const client = new Client({ name: "toolfront-ts-test", version: "1.0.0" });
await client.connect(transport);

const listed = await listAllTools(client);
const product = { sku, name: "TS mug", price_cents: 300, currency: "EUR" };
const created = await client.callTool({ name: "catalogue-create_product", arguments: product });
const missing = await client.callTool({ name: "catalogue-get_product", arguments: { sku: "NOPE-TS" } });
const held = await client.callTool({ name: "catalogue-delete_product", arguments: { sku } });
let unknown = null;
try {
  await client.callTool({ name: "catalogue-melt_products", arguments: {} });
} catch (error) {
  unknown = { code: error.code, message: String(error.message) };
}
await client.close();

console.log(JSON.stringify({
  protocolVersion: transport.protocolVersion ?? null,
  sessionId: transport.sessionId ?? null,
  tools: listed.tools.map((tool) => ({ name: tool.name, annotations: tool.annotations })),
  created: { isError: created.isError, structured: created.structuredContent },
  missing: { isError: missing.isError, structured: missing.structuredContent ?? null, text: missing.content[0]?.text },
  held: { isError: held.isError, structured: held.structuredContent, text: held.content[0].text },
  unknown,
}));
