/**
 * A small typed client of the Pinework Memory HTTP API (docs/integrations/typescript.md).
 *
 * `createPineworkClient` returns an openapi-fetch client typed by `src/schema.d.ts`, which
 * openapi-typescript generates from the service's OpenAPI document (`openapi.json`, written by
 * `python scripts/typescript_client.py write`), with the bearer token and the run headers set
 * (docs/reference.md#authentication, docs/reference.md#run-headers). Every route of the document
 * is callable through it (`client.GET("/memories/{memory_id}", …)`); four helpers cover the
 * calls an agent makes most and throw a `PineworkError` on an error answer
 * (docs/reference.md#6-errors).
 */

import createClient, { type Client } from "openapi-fetch";

import type { components, operations, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

/** The API's prefix; the document's paths are below it (its `servers` entry). */
export const API_PREFIX = "/api/v1";

/** A memory as every route returns it (docs/reference.md#3-the-memory-object). */
export type Memory = components["schemas"]["MemoryObject"];
/** A recall's answer: the scored memories and the block to paste (docs/reference.md#8-recall). */
export type Recall = components["schemas"]["RecallObject"];
/** One page of memories, newest first (docs/reference.md#lists). */
export type MemoryList = components["schemas"]["MemoryList"];
/** The body of `POST /memories` (docs/reference.md#routes-memories). */
export type SaveFactBody = components["schemas"]["SaveFactRequest"];
/** The body of `POST /memories/recall` (docs/reference.md#routes-recall). */
export type RecallBody = components["schemas"]["RecallRequest"];
/** The query of `GET /memories`: `agentId`, `kind`, `status`, `all`, `limit`, `nextToken`. */
export type ListMemoriesQuery = NonNullable<operations["list_memories"]["parameters"]["query"]>;
/** The error envelope every non-2xx answer carries (docs/reference.md#6-errors). */
export type ErrorEnvelope = { error: { code: string; message: string } };

/** The client-side code of a request that got no HTTP answer (`status` 0). */
export const CONNECTION_ERROR = "connection_error";
/** The client-side code of an answer that is not the JSON the API documents. */
export const INVALID_RESPONSE = "invalid_response";

/**
 * A call to the Pinework API failed.
 *
 * `code` is the error envelope's code (e.g. `memory_text_too_long`, docs/reference.md#6-errors),
 * or the client's own `connection_error` (no answer; `status` 0) or `invalid_response` (an
 * answer without the envelope); `status` is the HTTP status; `message` says what to do.
 */
export class PineworkError extends Error {
  readonly code: string;
  readonly status: number;

  /** An error with this code, HTTP status (0: no answer) and message. */
  constructor(code: string, status: number, message: string) {
    super(message);
    this.name = "PineworkError";
    this.code = code;
    this.status = status;
  }

  /**
   * The error a non-2xx answer stands for: its envelope's code and message, or
   * `invalid_response` with the body's start when it carries no envelope.
   */
  static fromAnswer(status: number, body: unknown): PineworkError {
    if (isEnvelope(body)) {
      return new PineworkError(body.error.code, status, body.error.message);
    }
    const text = typeof body === "string" ? body : JSON.stringify(body ?? "");
    const shown = text.trim().slice(0, 200) || "(empty body)";
    return new PineworkError(
      INVALID_RESPONSE,
      status,
      `HTTP ${status} without a Pinework error envelope: ${shown}`,
    );
  }
}

/** True when `body` is `{"error": {"code": "…", "message": "…"}}` with a non-empty code. */
function isEnvelope(body: unknown): body is ErrorEnvelope {
  if (typeof body !== "object" || body === null || !("error" in body)) {
    return false;
  }
  const error: unknown = body.error;
  return (
    typeof error === "object" &&
    error !== null &&
    "code" in error &&
    "message" in error &&
    typeof error.code === "string" &&
    error.code !== "" &&
    typeof error.message === "string"
  );
}

/** What `createPineworkClient` takes. */
export interface PineworkClientOptions {
  /** The server root, with or without `/api/v1` (e.g. `http://127.0.0.1:8000`). */
  baseUrl: string;
  /** An agent's or a person's bearer token (docs/reference.md#authentication). */
  token: string;
  /** Sent as `X-Pinework-Run` (docs/reference.md#run-headers). */
  runId?: string;
  /** Sent as `X-Pinework-Task`: prefixes day lines, the default recall query. */
  taskKey?: string;
  /** Sent as `X-Pinework-Session` (run-start recall, docs/reference.md#8-recall). */
  sessionId?: string;
  /** A `fetch` to use instead of the global one (tests pass a fake). */
  fetch?: (input: Request) => Promise<Response>;
}

/** Per-call options of the helpers that change state. */
export interface WriteOptions {
  /** Sent as `Idempotency-Key`: a retry with the same key gets the first answer again. */
  idempotencyKey?: string;
}

/** The four helpers `createPineworkClient` adds to the openapi-fetch client. */
export interface PineworkHelpers {
  /** Save a fact (`POST /memories`, 201): text of 1–500 characters, no secrets. */
  saveFact(body: SaveFactBody, options?: WriteOptions): Promise<Memory>;
  /** Append a line (at most 300 characters) to today's (UTC) day log (`POST /memories/day`). */
  appendDayLine(line: string, options?: WriteOptions): Promise<Memory>;
  /** Recall (`POST /memories/recall`): the facts that matter for `query` (default: the task). */
  recall(body?: RecallBody): Promise<Recall>;
  /** One page of memories (`GET /memories`), newest first; `nextToken` continues. */
  listMemories(query?: ListMemoriesQuery): Promise<MemoryList>;
}

/** The openapi-fetch client of the document's paths, with the helpers. */
export type PineworkClient = Client<paths> & PineworkHelpers;

/**
 * The API URL every path is appended to: `baseUrl` without a trailing slash, with `/api/v1`.
 * Throws a `TypeError` when it is not an `http://` or `https://` URL.
 */
export function apiUrl(baseUrl: string): string {
  const url = baseUrl.trim().replace(/\/+$/, "");
  if (!/^https?:\/\//.test(url)) {
    throw new TypeError(`the API URL must start with http:// or https://, got ${baseUrl}`);
  }
  return url.endsWith(API_PREFIX) ? url : url + API_PREFIX;
}

/** A run header's rule the client checks before sending: printable ASCII, at most 128. */
const RUN_HEADER = /^[\x20-\x7e]{0,128}$/;

/**
 * The headers every request carries: the bearer token and the run headers that are set.
 * Throws a `TypeError` naming a run header that is not printable ASCII of at most 128
 * characters (docs/reference.md#run-headers); the server checks the rest of its rules.
 */
function principalHeaders(options: PineworkClientOptions): Record<string, string> {
  const headers: Record<string, string> = { Authorization: `Bearer ${options.token}` };
  const run: Array<[string, string | undefined]> = [
    ["X-Pinework-Run", options.runId],
    ["X-Pinework-Task", options.taskKey],
    ["X-Pinework-Session", options.sessionId],
  ];
  for (const [name, value] of run) {
    if (value === undefined) {
      continue;
    }
    if (!RUN_HEADER.test(value)) {
      throw new TypeError(`${name} must be printable ASCII of at most 128 characters`);
    }
    headers[name] = value;
  }
  return headers;
}

/** `Idempotency-Key` when one is given, else no header parameters. */
function writeHeaders(options: WriteOptions | undefined): { "Idempotency-Key"?: string } {
  return options?.idempotencyKey === undefined
    ? {}
    : { "Idempotency-Key": options.idempotencyKey };
}

/** One openapi-fetch answer: `data` on 2xx, `error` (the parsed body) otherwise. */
type Answer<T> = { data?: T; error?: unknown; response: Response };

/**
 * The 2xx answer's JSON, or a `PineworkError`: the envelope's code on a non-2xx answer,
 * `connection_error` when the request got no answer, `invalid_response` on a 2xx without JSON.
 */
async function unwrap<T>(call: () => Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await call();
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new PineworkError(CONNECTION_ERROR, 0, `the request got no answer: ${reason}`);
  }
  const { data, error, response } = answer;
  if (!response.ok) {
    throw PineworkError.fromAnswer(response.status, error);
  }
  if (data === undefined) {
    throw new PineworkError(INVALID_RESPONSE, response.status, "a 2xx answer without a JSON body");
  }
  return data;
}

/**
 * A client of one Pinework API as one principal: the openapi-fetch client of `paths` with
 * `Authorization: Bearer <token>` and the `X-Pinework-*` headers set, plus `saveFact`,
 * `appendDayLine`, `recall` and `listMemories`, which return the answer's JSON and throw a
 * `PineworkError` on an error answer (docs/reference.md#6-errors). Throws a `TypeError` when
 * `baseUrl` is not an http(s) URL or a run header is not printable ASCII of at most 128.
 */
export function createPineworkClient(options: PineworkClientOptions): PineworkClient {
  const client = createClient<paths>({
    baseUrl: apiUrl(options.baseUrl),
    headers: principalHeaders(options),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  const helpers: PineworkHelpers = {
    saveFact: (body, write) =>
      unwrap(() => client.POST("/memories", { body, params: { header: writeHeaders(write) } })),
    appendDayLine: (line, write) =>
      unwrap(() =>
        client.POST("/memories/day", { body: { line }, params: { header: writeHeaders(write) } }),
      ),
    recall: (body = {}) => unwrap(() => client.POST("/memories/recall", { body })),
    listMemories: (query = {}) => unwrap(() => client.GET("/memories", { params: { query } })),
  };
  return Object.assign(client, helpers);
}
