// Every page of tools/list, as a client that wants every tool follows nextCursor (the test stack
// lists 4 tools a page). The SDK keeps what each listed tool says (output schemas, task support),
// so a client that read only the first page would not know the others.
export async function listAllTools(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return { tools };
}
