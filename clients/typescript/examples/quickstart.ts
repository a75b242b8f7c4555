/**
 * Quickstart (docs/integrations/typescript.md): save a fact, recall it, print the block.
 *
 * Runs offline against `make serve`: `PINEWORK_API_URL` (default http://127.0.0.1:8000) and
 * `PINEWORK_TOKEN` (default: the demo agent's token in `.pinework-local/demo.json`, or in
 * `$PINEWORK_DATA_DIR/demo.json`). `PINEWORK_EXAMPLE_FACT` replaces the fact it saves.
 *
 *     npm run build && npm run example
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { createPineworkClient, PineworkError } from "../src/index.js";

const DEFAULT_FACT = "The uploader retries failed chunk uploads with exponential backoff, 5 tries.";

/** The demo agent's token the local server wrote at its first start (`demo.json`). */
function demoToken(): string {
  const repo = fileURLToPath(new URL("../../../../", import.meta.url));
  const dataDir = process.env.PINEWORK_DATA_DIR?.trim() || join(repo, ".pinework-local");
  const demo = join(dataDir, "demo.json");
  try {
    const parsed: unknown = JSON.parse(readFileSync(demo, "utf8"));
    if (typeof parsed === "object" && parsed !== null && "agentToken" in parsed) {
      return String(parsed.agentToken);
    }
  } catch {
    // no demo file: said below
  }
  throw new Error(`Set PINEWORK_TOKEN, or start \`make serve\` (it writes ${demo}).`);
}

/** Save the fact, recall it and print what the recall gave. */
async function main(): Promise<void> {
  const client = createPineworkClient({
    baseUrl: process.env.PINEWORK_API_URL?.trim() || "http://127.0.0.1:8000",
    token: process.env.PINEWORK_TOKEN?.trim() || demoToken(),
    runId: "run_quickstart",
    taskKey: "PIN-42",
  });
  const fact = process.env.PINEWORK_EXAMPLE_FACT?.trim() || DEFAULT_FACT;
  const saved = await client.saveFact({ text: fact });
  console.log(`saved ${saved.id}: ${saved.text}`);

  const recalled = await client.recall({ query: "How does the uploader retry failed uploads?" });
  console.log(`recalled ${recalled.memories.length} memories (${recalled.recallId ?? "no log"})`);
  console.log(recalled.block ?? "(no block)");
}

main().catch((error: unknown) => {
  if (error instanceof PineworkError) {
    console.error(`pinework: ${error.code} (HTTP ${error.status}): ${error.message}`);
  } else {
    console.error(error);
  }
  process.exitCode = 1;
});
