// Streams a dropped file (ndjson or a JSON array, any size) record by record, and cuts import requests
// under the server's 500 000-byte body limit (SPEC 8) without re-encoding any record.

export const MAX_BODY_BYTES = 500_000;
const encoder = new TextEncoder();

export interface RawRecord {
  /** Zero-based position in the file. */
  position: number;
  /** The record's JSON text, as in the file. */
  text: string;
}

/** Yields each record's raw JSON text; `onBytes` reports how much of the file was read. */
export async function* readRecords(file: Blob, onBytes?: (read: number) => void): AsyncGenerator<RawRecord> {
  const reader = file.stream().getReader();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let read = 0;
  let mode: "unknown" | "ndjson" | "array" = "unknown";
  let buffer = "";
  let position = 0;
  // JSON array state
  let depth = 0;
  let inString = false;
  let escaped = false;
  let start = -1;
  let ended = false;

  function* ndjsonLines(final: boolean): Generator<RawRecord> {
    let from = 0;
    let newline: number;
    while ((newline = buffer.indexOf("\n", from)) >= 0) {
      const line = buffer.slice(from, newline).trim();
      from = newline + 1;
      if (line) yield { position: position++, text: line };
    }
    buffer = buffer.slice(from);
    if (final && buffer.trim()) {
      yield { position: position++, text: buffer.trim() };
      buffer = "";
    }
  }

  let scan = 0; // next index of `buffer` to look at; what is before it was scanned already

  function* arrayElements(): Generator<RawRecord> {
    for (; scan < buffer.length; scan++) {
      const c = buffer[scan];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === "\\") escaped = true;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') {
        inString = true;
        if (depth === 1 && start < 0) start = scan;
      } else if (c === "{" || c === "[") {
        if (depth === 1 && start < 0) start = scan;
        depth++;
      } else if (c === "}" || c === "]") {
        depth--;
        if (depth === 0) {
          if (start >= 0) yield { position: position++, text: buffer.slice(start, scan).trim() };
          start = -1;
          ended = true;
          buffer = "";
          scan = 0;
          return;
        }
      } else if (c === "," && depth === 1) {
        if (start >= 0) yield { position: position++, text: buffer.slice(start, scan).trim() };
        start = -1;
      } else if (depth === 1 && start < 0 && !/\s/.test(c)) {
        start = scan;
      }
    }
    // Keep only the unfinished element; it is not scanned again.
    const keep = start >= 0 ? start : buffer.length;
    buffer = buffer.slice(keep);
    scan -= keep;
    if (start >= 0) start = 0;
  }

  for (;;) {
    const { done, value } = await reader.read();
    if (value) {
      read += value.byteLength;
      buffer += decoder.decode(value, { stream: true });
      onBytes?.(read);
    }
    if (done) buffer += decoder.decode();
    if (mode === "unknown") {
      const first = buffer.trimStart()[0];
      if (first === "[") {
        mode = "array";
        const at = buffer.indexOf("[");
        buffer = buffer.slice(at + 1);
        depth = 1;
      } else if (first !== undefined) {
        mode = "ndjson";
      }
    }
    if (mode === "ndjson") yield* ndjsonLines(done);
    else if (mode === "array" && !ended) yield* arrayElements();
    if (done) break;
  }
  if (mode === "array" && !ended) throw new Error("the JSON array is not closed: the file is cut short");
}

export interface Batch {
  /** The request body, ready to send. */
  body: string;
  /** File positions of the records, in order (the task's `index` maps to these). */
  positions: number[];
}

export interface Rejected {
  position: number;
  reason: string;
}

/** Groups records into request bodies under `limit` bytes; a record that cannot fit alone is rejected. */
export async function* batches(
  records: AsyncIterable<RawRecord>,
  options: { identifier: string; upsert: boolean; dryRun: boolean },
  rejected: Rejected[],
  limit = MAX_BODY_BYTES - 1,
): AsyncGenerator<Batch> {
  const head = `{"identifier":${JSON.stringify(options.identifier)},"upsert":${options.upsert},"dry_run":${options.dryRun},"records":[`;
  const overhead = encoder.encode(head).length + 2;
  let parts: string[] = [];
  let positions: number[] = [];
  let size = overhead;
  for await (const record of records) {
    let value: unknown;
    try {
      value = JSON.parse(record.text);
    } catch {
      rejected.push({ position: record.position, reason: "not valid JSON" });
      continue;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      rejected.push({ position: record.position, reason: "not a JSON object" });
      continue;
    }
    const bytes = encoder.encode(record.text).length + 1;
    if (overhead + bytes > limit) {
      rejected.push({ position: record.position, reason: `larger than one request may be (${limit} bytes)` });
      continue;
    }
    if (size + bytes > limit && parts.length) {
      yield { body: head + parts.join(",") + "]}", positions };
      parts = [];
      positions = [];
      size = overhead;
    }
    parts.push(record.text);
    positions.push(record.position);
    size += bytes;
  }
  if (parts.length) yield { body: head + parts.join(",") + "]}", positions };
}
