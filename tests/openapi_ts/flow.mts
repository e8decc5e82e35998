/**
 * The README's REST flow through a client generated from toolfront's /v1/openapi.json: types by
 * openapi-typescript (`schema.d.ts`, written beside this file by tests/http/test_openapi_clients.py),
 * calls by openapi-fetch. Type-checked by `tsc --strict --noEmit`, then run by node in two phases,
 * each printing one JSON line:
 *
 * - `flow.mjs hold URL KEY SKU`: a keyed create and its retry, reads (the product, an export's content
 *   blocks), then a delete, which is held (202 pending_approval);
 * - `flow.mjs settle URL KEY SKU APPROVAL_ID`, once a person decided: polls system.get_approval to
 *   the end, reads GET /v1/approvals/{id}, and reads the product again.
 *
 * No cast anywhere: a tool that may be held answers 200 or 202, which openapi-fetch types as one
 * union; `held` narrows it by the response's status.
 */
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type Pending = components["schemas"]["PendingEnvelope"];
const FINAL = ["succeeded", "failed", "rejected", "expired", "cancelled"];

/** Whether a 2xx body is the 202 of a held call (the status says which of the 2xx bodies came). */
function held<Body>(response: Response, body: Body): body is Extract<Body, Pending> {
  return response.status === 202;
}

function refused(step: string, response: Response, error: components["schemas"]["ErrorEnvelope"]): Error {
  return new Error(`${step}: ${response.status} ${error.error.code}: ${error.error.message}`);
}

const [phase = "", baseUrl = "", key = "", sku = "", approvalId = ""] = process.argv.slice(2);
// JSON answers only: the label's raw image forms are not what this flow reads
const client = createClient<paths, "application/json">({ baseUrl, headers: { Authorization: `Bearer ${key}` } });

async function hold(): Promise<object> {
  const product = { sku, name: "Typed mug", price_cents: 1500, currency: "EUR" };
  const create = () =>
    client.POST("/v1/tools/catalogue/create_product", { body: { ...product, idempotency_key: `create-${sku}` } });
  const first = await create();
  if (first.error) throw refused("create", first.response, first.error);
  if (held(first.response, first.data)) throw new Error(`create held: ${first.data.data.approval_id}`);
  const again = await create(); // the same call, retried
  if (again.error) throw refused("retry", again.response, again.error);
  if (held(again.response, again.data)) throw new Error(`retry held: ${again.data.data.approval_id}`);

  const got = await client.POST("/v1/tools/catalogue/get_product", { body: { sku } });
  if (got.error) throw refused("get", got.response, got.error);
  const exported = await client.POST("/v1/tools/catalogue/export_products", { body: { format: "csv" } });
  if (exported.error) throw refused("export", exported.response, exported.error);
  const resources: string[] = [];
  for (const block of exported.data.content ?? []) {
    if (block.type === "resource") resources.push(block.resource.mimeType); // narrowed by the discriminator
  }

  const deleted = await client.POST("/v1/tools/catalogue/delete_product", { body: { sku } });
  if (deleted.error) throw refused("delete", deleted.response, deleted.error);
  if (!held(deleted.response, deleted.data)) throw new Error(`delete ran at once: ${deleted.data.data.deleted}`);
  return {
    created: { status: first.response.status, product: first.data.data.product },
    retried: {
      status: again.response.status,
      replayed: again.response.headers.get("idempotent-replayed"),
      same: JSON.stringify(again.data) === JSON.stringify(first.data),
    },
    got: got.data.data.product,
    exported: {
      count: exported.data.data.count,
      blocks: (exported.data.content ?? []).map((block) => block.type),
      mime_types: resources,
    },
    held: {
      status: deleted.response.status,
      data_status: deleted.data.data.status,
      approval_id: deleted.data.data.approval_id,
    },
  };
}

async function settle(): Promise<object> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const polled = await client.POST("/v1/tools/system/get_approval", { body: { approval_id: approvalId } });
    if (polled.error) throw refused("poll", polled.response, polled.error);
    const approval = polled.data.data; // core's tools are never held: a 200 only
    if (FINAL.includes(approval.status) || Date.now() > deadline) {
      const route = await client.GET("/v1/approvals/{id}", { params: { path: { id: approvalId } } });
      if (route.error) throw refused("route", route.response, route.error);
      const gone = await client.POST("/v1/tools/catalogue/get_product", { body: { sku } });
      return {
        status: approval.status,
        result: approval.result,
        decided_by: approval.decided_by?.kind ?? null,
        route_status: route.data.data.status,
        after: { status: gone.response.status, code: gone.error?.error.code ?? null },
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

console.log(JSON.stringify(await (phase === "hold" ? hold() : settle())));
