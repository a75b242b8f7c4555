/**
 * The client against an in-process fake `fetch` (docs/integrations/typescript.md): the headers
 * it sets, the error envelope mapped to `PineworkError` (docs/reference.md#6-errors), and paths
 * and bodies typed by the generated schema (the `@ts-expect-error` lines fail `npm run build`
 * when the schema stops refusing them).
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  apiUrl,
  createPineworkClient,
  type Memory,
  type PineworkClient,
  PineworkError,
} from "../src/index.js";

const MEMORY: Memory = {
  id: "mem_01",
  object: "memory",
  agentId: "agt_01",
  kind: "fact",
  date: null,
  text: "The uploader retries 5 times.",
  tags: [],
  metadata: {},
  expiresAt: "2027-02-28T12:00:00.000Z",
  expired: false,
  status: "active",
  archiveReason: null,
  archivedAt: null,
  supersedes: null,
  supersededBy: null,
  runId: "run_1",
  taskKey: "PIN-42",
  savedByAgentId: "agt_01",
  editedByPersonId: null,
  recallCount: 0,
  lastRecalledAt: null,
  createdAt: "2026-11-30T12:00:00.000Z",
  updatedAt: "2026-11-30T12:00:00.000Z",
  erasedAt: null,
  erasedBy: null,
  eraseReason: null,
};

/** What `createPineworkClient` takes as `fetch`. */
type FakeFetch = (request: Request) => Promise<Response>;

/** A fake `fetch` answering `status` with `body` (JSON unless a string) and keeping requests. */
function fake(status: number, body: unknown): { fetch: FakeFetch; seen: Request[] } {
  const seen: Request[] = [];
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const type = typeof body === "string" ? "text/html" : "application/json";
  return {
    seen,
    fetch: async (request: Request) => {
      seen.push(request);
      return new Response(text, { status, headers: { "Content-Type": type } });
    },
  };
}

/** A client of http://pinework.test on `fetch`. */
function clientOn(fetch: FakeFetch): PineworkClient {
  return createPineworkClient({ baseUrl: "http://pinework.test", token: "tok_1", fetch });
}

test("saveFact sends the token, the run headers and the body, and returns the memory", async () => {
  const server = fake(201, MEMORY);
  const client = createPineworkClient({
    baseUrl: "http://pinework.test/",
    token: "tok_1",
    runId: "run_1",
    taskKey: "PIN-42",
    sessionId: "session-1",
    fetch: server.fetch,
  });
  const memory = await client.saveFact({ text: MEMORY.text }, { idempotencyKey: "key-1" });
  assert.equal(memory.id, "mem_01");
  const [request] = server.seen;
  assert.ok(request);
  assert.equal(request.method, "POST");
  assert.equal(request.url, "http://pinework.test/api/v1/memories");
  assert.equal(request.headers.get("Authorization"), "Bearer tok_1");
  assert.equal(request.headers.get("X-Pinework-Run"), "run_1");
  assert.equal(request.headers.get("X-Pinework-Task"), "PIN-42");
  assert.equal(request.headers.get("X-Pinework-Session"), "session-1");
  assert.equal(request.headers.get("Idempotency-Key"), "key-1");
  assert.deepEqual(await request.json(), { text: MEMORY.text });
});

test("headers not given are not sent; the prefix is not doubled", async () => {
  const server = fake(200, { object: "list", data: [MEMORY], nextToken: null });
  const client = createPineworkClient({
    baseUrl: "http://pinework.test/api/v1",
    token: "tok_1",
    fetch: server.fetch,
  });
  const page = await client.listMemories({ kind: "fact", limit: 2 });
  assert.equal(page.data[0]?.id, "mem_01");
  const [request] = server.seen;
  assert.ok(request);
  assert.equal(request.url, "http://pinework.test/api/v1/memories?kind=fact&limit=2");
  assert.equal(request.headers.get("X-Pinework-Run"), null);
  assert.equal(request.headers.get("X-Pinework-Session"), null);
  assert.throws(() => apiUrl("pinework.test"), TypeError);
  const badTask = { baseUrl: "http://pinework.test", token: "t", taskKey: "PIN-42 ✓" };
  assert.throws(() => createPineworkClient(badTask), /X-Pinework-Task must be printable ASCII/);
});

test("an error envelope becomes a PineworkError with its code, status and message", async () => {
  const envelope = { error: { code: "memory_text_too_long", message: "shorten it" } };
  const client = clientOn(fake(400, envelope).fetch);
  await assert.rejects(client.appendDayLine("x".repeat(301)), (error: unknown) => {
    assert.ok(error instanceof PineworkError);
    assert.equal(error.code, "memory_text_too_long");
    assert.equal(error.status, 400);
    assert.equal(error.message, "shorten it");
    return true;
  });
});

test("no envelope is invalid_response; no answer is connection_error", async () => {
  const html = clientOn(fake(502, "<html>Bad Gateway</html>").fetch);
  await assert.rejects(html.recall(), { code: "invalid_response", status: 502 });
  const down = clientOn(async () => {
    throw new TypeError("fetch failed");
  });
  await assert.rejects(down.recall({ query: "retries" }), { code: "connection_error", status: 0 });
});

test("the raw client takes the document's paths with typed parameters", async () => {
  const server = fake(200, MEMORY);
  const client = clientOn(server.fetch);
  const { data } = await client.GET("/memories/{memory_id}", {
    params: { path: { memory_id: "mem_01" } },
  });
  assert.equal(data?.kind, "fact");
  assert.equal(server.seen[0]?.url, "http://pinework.test/api/v1/memories/mem_01");
});

/** Never called: `tsc` checks that the schema refuses these (a test of the types). */
export function refusedByTheTypes(client: PineworkClient): void {
  // @ts-expect-error: not a path of the document
  void client.GET("/memory");
  // @ts-expect-error: a fact's body has `text`, not `txt`
  void client.saveFact({ txt: "x" });
  // @ts-expect-error: `kind` is `fact` or `day`
  void client.listMemories({ kind: "note" });
  // @ts-expect-error: the path needs its `memory_id`
  void client.GET("/memories/{memory_id}", {});
}
