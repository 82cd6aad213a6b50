import { ApiError, call, get } from "./api";
import { announce, download, errorBox, formatDuration, formatNumber, formatTime, h, sleep, svg } from "./dom";
import { batches, readRecords, type Rejected } from "./records";

const OUTCOMES = ["inserted", "updated", "skipped", "failed"] as const;
type Outcome = (typeof OUTCOMES)[number];
type Summary = Record<Outcome | "total", number>;

interface TaskItem {
  id: string;
  created_at: string;
  completed_at?: string;
  status: "pending" | "completed";
  dry_run: boolean;
  summary?: Summary;
  progress?: { total: number; processed: number };
}

interface Detail {
  index: number;
  record: unknown;
  outcome: Outcome;
  user_id?: string;
  warnings?: { message: string }[];
  errors?: { name: string; reason: string; message: string; info?: any }[];
}

interface TaskStatus extends TaskItem {
  details?: Detail[];
}

// ---- The list and the drop zone ---------------------------------------------------------------------------

export async function importsPage(main: HTMLElement, signal: AbortSignal): Promise<void> {
  main.append(h("h1", {}, "Imports"), uploadCard(signal));
  const list = h("section", { class: "card", "aria-labelledby": "recent-title" }, h("h2", { id: "recent-title" }, "Recent tasks"));
  main.append(list);
  await taskList(list, signal);
}

async function taskList(section: HTMLElement, signal: AbortSignal): Promise<void> {
  const table = h("table", {}, h("caption", { class: "visually-hidden" }, "Import tasks, newest first"));
  const head = h("tr", {}, ...["Task", "Created", "Kind", "Status", "Records", "Failed"].map((c) => h("th", { scope: "col" }, c)));
  const body = h("tbody");
  table.append(h("thead", {}, head), body);
  const more = h("button", { type: "button", class: "secondary" }, "Load more");
  const wrap = h("div", { class: "scroll" }, table);
  section.append(wrap, more);
  let cursor: string | null = null;
  const load = async () => {
    const query = new URLSearchParams({ limit: "20" });
    if (cursor) query.set("cursor", cursor);
    const page = await get<{ items: TaskItem[]; next_cursor: string | null }>(`/users/import?${query}`);
    for (const task of page.items) body.append(taskRow(task));
    if (!body.children.length) body.append(h("tr", {}, h("td", { colspan: 6 }, "No import yet. Drop a file above.")));
    cursor = page.next_cursor;
    more.hidden = !cursor;
  };
  more.addEventListener("click", () => void load().catch((e) => section.append(errorBox(e))));
  await load();
  // Refresh the first page while the page is open: new tasks appear, pending ones move.
  void (async () => {
    while (!signal.aborted) {
      await sleep(2000);
      if (signal.aborted || document.hidden) continue;
      try {
        const page = await get<{ items: TaskItem[] }>("/users/import?limit=20");
        for (const task of [...page.items].reverse()) {
          const row = body.querySelector(`[data-id="${task.id}"]`);
          if (row) row.replaceWith(taskRow(task));
          else {
            body.querySelector("td[colspan]")?.parentElement?.remove();
            body.prepend(taskRow(task));
          }
        }
      } catch {
        /* the next round tries again */
      }
    }
  })();
}

function taskRow(task: TaskItem): HTMLTableRowElement {
  const total = task.summary?.total ?? task.progress?.total ?? 0;
  const status =
    task.status === "pending" && task.progress
      ? `pending ${Math.floor((100 * task.progress.processed) / Math.max(1, task.progress.total))}%`
      : task.status;
  return h(
    "tr",
    { "data-id": task.id, "data-pending": task.status === "pending" },
    h("td", {}, h("a", { href: `#/imports/${task.id}` }, task.id)),
    h("td", {}, formatTime(task.created_at)),
    h("td", {}, task.dry_run ? "dry run" : "import"),
    h("td", {}, status),
    h("td", { class: "num" }, formatNumber(total)),
    h("td", { class: "num" }, task.summary ? formatNumber(task.summary.failed) : "-"),
  );
}

function uploadCard(signal: AbortSignal): HTMLElement {
  const input = h("input", { type: "file", id: "file-input", accept: ".ndjson,.jsonl,.json,application/json", class: "visually-hidden" });
  const zone = h(
    "div",
    { class: "dropzone", id: "dropzone" },
    h("p", {}, "Drop an ndjson file or a JSON array of users here (any size), or"),
    h("label", { for: "file-input", class: "button" }, "Choose a file"),
    input,
  );
  const identifier = h(
    "select",
    { id: "identifier" },
    ...["email", "preferred_username", "phone_number"].map((v) => h("option", { value: v }, v)),
  );
  const upsert = h("input", { type: "checkbox", id: "upsert" });
  const chosen = h("p", { class: "muted", id: "chosen" }, "No file chosen.");
  const dryRun = h("button", { type: "button", id: "dry-run", disabled: true }, "Dry run");
  const run = h("button", { type: "button", id: "run-import", disabled: true }, "Run import");
  const result = h("div", { id: "upload-result" });
  let file: File | null = null;

  const choose = (picked: File | undefined) => {
    if (!picked) return;
    file = picked;
    chosen.textContent = `${picked.name} (${formatNumber(picked.size)} bytes)`;
    dryRun.disabled = false;
    run.disabled = true;
    result.replaceChildren(h("p", {}, "Start with a dry run: it checks every record against the live data and writes nothing."));
  };
  input.addEventListener("change", () => choose(input.files?.[0]));
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    choose(event.dataTransfer?.files?.[0]);
  });

  const start = async (isDry: boolean) => {
    if (!file) return;
    dryRun.disabled = run.disabled = true;
    try {
      const outcome = await upload(file, { identifier: identifier.value, upsert: upsert.checked, dryRun: isDry }, result, signal);
      if (isDry && outcome) run.disabled = false;
    } catch (error) {
      result.append(errorBox(error));
    } finally {
      dryRun.disabled = false;
    }
  };
  dryRun.addEventListener("click", () => void start(true));
  run.addEventListener("click", () => void start(false));

  return h(
    "section",
    { class: "card", "aria-labelledby": "upload-title" },
    h("h2", { id: "upload-title" }, "Import a file"),
    zone,
    chosen,
    h(
      "div",
      { class: "row" },
      h("label", { for: "identifier" }, "Identifier "),
      identifier,
      h("label", { class: "check" }, upsert, " Update existing users (upsert)"),
    ),
    h("div", { class: "row" }, dryRun, run),
    result,
  );
}

interface UploadOptions {
  identifier: string;
  upsert: boolean;
  dryRun: boolean;
}

/** Streams the file in requests under 500 000 bytes, then follows every task to the end. */
async function upload(file: File, options: UploadOptions, out: HTMLElement, signal: AbortSignal): Promise<boolean> {
  const label = options.dryRun ? "Dry run" : "Import";
  const bar = progressBar(`${label} progress`);
  const status = h("p", { "aria-live": "polite" }, "Reading the file…");
  out.replaceChildren(h("h3", {}, label), bar.element, status);
  const rejected: Rejected[] = [];
  const tasks: { id: string; positions: number[] }[] = [];
  let read = 0;
  let sent = 0;
  for await (const batch of batches(readRecords(file, (n) => (read = n)), options, rejected)) {
    if (signal.aborted) return false;
    // The same Idempotency-Key on a retry: a request whose answer was lost is not applied twice.
    const key = crypto.randomUUID();
    const created = await retrying(() => call<{ id: string }>("POST", "/users/import", batch.body, { "Idempotency-Key": key }), signal);
    tasks.push({ id: created.id, positions: batch.positions });
    sent += batch.positions.length;
    bar.set(read, file.size, "sending");
    status.textContent = `Sent ${formatNumber(sent)} records in ${tasks.length} request(s) (${Math.round((100 * read) / Math.max(1, file.size))}% of the file).`;
  }
  const total = sent;
  const started = performance.now();
  const summary: Summary = { total: 0, inserted: 0, updated: 0, skipped: 0, failed: 0 };
  const failures: Detail[] = [];
  const remaining = new Set(tasks.map((t) => t.id));
  const processed = new Map<string, number>();
  const rate = new RateMeter();
  while (remaining.size && !signal.aborted) {
    for (const task of tasks) {
      if (!remaining.has(task.id)) continue;
      const body = await retrying(() => get<TaskStatus>(`/users/import/${task.id}`), signal);
      if (body.status === "completed" && body.summary) {
        remaining.delete(task.id);
        processed.set(task.id, body.summary.total);
        for (const key of OUTCOMES) summary[key] += body.summary[key];
        summary.total += body.summary.total;
        for (const detail of body.details ?? []) {
          if (detail.outcome === "failed") failures.push({ ...detail, index: task.positions[detail.index] ?? detail.index });
        }
      } else if (body.progress) {
        processed.set(task.id, body.progress.processed);
      }
    }
    const done = [...processed.values()].reduce((a, b) => a + b, 0);
    rate.add(done);
    bar.set(done, total, "processing");
    status.textContent = `${formatNumber(done)} of ${formatNumber(total)} records processed · ${formatNumber(Math.round(rate.perSecond()))} records/s · ETA ${formatDuration(rate.eta(total - done))}`;
    if (remaining.size) await sleep(700);
  }
  if (signal.aborted) return false;
  const seconds = (performance.now() - started) / 1000;
  status.textContent = `${label} finished: ${formatNumber(summary.total)} records in ${formatDuration(seconds)}.`;
  announce(status.textContent);
  out.append(
    h("h3", {}, options.dryRun ? "Predicted outcomes" : "Outcomes"),
    outcomeChart(summary),
    failures.length ? failureGroups(failures) : h("p", {}, "No record failed."),
    h(
      "p",
      {},
      "Tasks: ",
      ...tasks.flatMap((t, i) => [i ? ", " : "", h("a", { href: `#/imports/${t.id}` }, t.id)]),
    ),
  );
  if (rejected.length) {
    out.append(h("p", { class: "error", role: "alert" }, `${rejected.length} records were not sent: `, rejected.slice(0, 5).map((r) => `#${r.position} ${r.reason}`).join("; ")));
  }
  if (options.dryRun) out.append(h("p", {}, "Nothing was written. Run the import to apply these outcomes."));
  return true;
}

/** Retries what the server answers "try later" (429, 503: a busy database, a restart) with growing pauses. */
async function retrying<T>(action: () => Promise<T>, signal: AbortSignal, attempts = 8): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await action();
    } catch (error) {
      const transient = error instanceof ApiError ? [429, 502, 503, 504].includes(error.status) : error instanceof TypeError;
      if (!transient || attempt >= attempts || signal.aborted) throw error;
      await sleep(Math.min(8000, 250 * 2 ** attempt));
    }
  }
}

class RateMeter {
  private samples: [number, number][] = [];

  add(done: number): void {
    const now = performance.now();
    this.samples.push([now, done]);
    while (this.samples.length > 2 && now - this.samples[0][0] > 10_000) this.samples.shift();
  }

  perSecond(): number {
    if (this.samples.length < 2) return 0;
    const [t0, d0] = this.samples[0];
    const [t1, d1] = this.samples[this.samples.length - 1];
    return t1 > t0 ? ((d1 - d0) * 1000) / (t1 - t0) : 0;
  }

  eta(left: number): number {
    const rate = this.perSecond();
    return left <= 0 ? 0 : rate > 0 ? left / rate : Infinity;
  }
}

function progressBar(label: string) {
  const fill = h("div", { class: "fill" });
  const element = h(
    "div",
    { class: "progress", role: "progressbar", "aria-label": label, "aria-valuemin": 0, "aria-valuemax": 100, "aria-valuenow": 0 },
    fill,
  );
  return {
    element,
    set(done: number, total: number, phase: string) {
      const percent = total ? Math.min(100, Math.floor((100 * done) / total)) : 0;
      fill.style.width = `${percent}%`;
      element.setAttribute("aria-valuenow", String(percent));
      element.setAttribute("aria-valuetext", `${percent}% ${phase}`);
    },
  };
}

// ---- A task ------------------------------------------------------------------------------------------------

export async function taskPage(main: HTMLElement, signal: AbortSignal, id: string): Promise<void> {
  main.append(h("p", {}, h("a", { href: "#/imports" }, "← All imports")), h("h1", {}, "Import task ", h("code", {}, id)));
  const live = h("section", { class: "card", "aria-labelledby": "live-title" }, h("h2", { id: "live-title" }, "Progress"));
  main.append(live);
  const bar = progressBar("Task progress");
  const figures = h("p", { "aria-live": "polite", id: "task-figures" });
  live.append(bar.element, figures);
  const rate = new RateMeter();
  let body: TaskStatus;
  for (;;) {
    try {
      body = await get<TaskStatus>(`/users/import/${encodeURIComponent(id)}`);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        main.append(errorBox("No such task: unknown, of another project, or expired (results are kept 24 hours)."));
        return;
      }
      throw error;
    }
    if (signal.aborted) return;
    if (body.status === "completed" || !body.progress) break;
    rate.add(body.progress.processed);
    bar.set(body.progress.processed, body.progress.total, "processing");
    figures.textContent = `${formatNumber(body.progress.processed)} of ${formatNumber(body.progress.total)} records done · ${formatNumber(Math.round(rate.perSecond()))} records/s · ETA ${formatDuration(rate.eta(body.progress.total - body.progress.processed))}`;
    await sleep(1000);
    if (signal.aborted) return;
  }
  const summary = body.summary as Summary;
  bar.set(1, 1, "completed");
  figures.textContent = `Completed${body.dry_run ? " (dry run: nothing was written)" : ""}: ${formatNumber(summary.total)} records, created ${formatTime(body.created_at)}${body.completed_at ? `, finished ${formatTime(body.completed_at)}` : ""}.`;
  announce(figures.textContent);
  const details = body.details ?? [];
  main.append(
    h("section", { class: "card", "aria-labelledby": "outcomes-title" }, h("h2", { id: "outcomes-title" }, "Outcomes"), outcomeChart(summary)),
  );
  const failed = details.filter((d) => d.outcome === "failed");
  const failures = h("section", { class: "card", "aria-labelledby": "failures-title" }, h("h2", { id: "failures-title" }, "Failures"));
  failures.append(failed.length ? failureGroups(failed) : h("p", {}, "No record failed."));
  if (failed.length) {
    failures.append(
      h(
        "button",
        {
          type: "button",
          id: "download-failed",
          onclick: () => download(`${id}-failed.ndjson`, failed.map((d) => JSON.stringify(d)).join("\n") + "\n", "application/x-ndjson"),
        },
        `Download the ${formatNumber(failed.length)} failed details (ndjson)`,
      ),
    );
  }
  main.append(failures, detailsBrowser(details));
}

function outcomeChart(summary: Summary): HTMLElement {
  const max = Math.max(1, ...OUTCOMES.map((o) => summary[o]));
  const rowHeight = 28;
  const chart = svg("svg", {
    viewBox: `0 0 400 ${rowHeight * OUTCOMES.length}`,
    class: "chart",
    role: "img",
    "aria-label": OUTCOMES.map((o) => `${o} ${summary[o]}`).join(", "),
  });
  OUTCOMES.forEach((outcome, i) => {
    const width = Math.max(summary[outcome] ? 2 : 0, (250 * summary[outcome]) / max);
    chart.append(
      svg("text", { x: 0, y: i * rowHeight + 18, class: "chart-label" }, outcome),
      svg("rect", { x: 80, y: i * rowHeight + 5, width, height: 18, rx: 3, class: `bar ${outcome}` }),
      svg("text", { x: 86 + width, y: i * rowHeight + 18, class: "chart-value" }, formatNumber(summary[outcome])),
    );
  });
  return h(
    "figure",
    { class: "outcomes" },
    chart,
    h(
      "figcaption",
      {},
      h("dl", { class: "counts" }, ...OUTCOMES.flatMap((o) => [h("dt", {}, o), h("dd", { "data-outcome": o }, formatNumber(summary[o]))])),
    ),
  );
}

const KEYS_SHOWN = 5;
const MESSAGE_SHOWN = 300;

/** Unknown role or group keys, the first few named: a record may list thousands. */
function keysLabel(keys: string[]): string {
  const shown = keys.slice(0, KEYS_SHOWN).join(", ");
  return keys.length > KEYS_SHOWN ? `keys ${shown} and ${formatNumber(keys.length - KEYS_SHOWN)} more` : `keys ${shown}`;
}

/** A message cut to a table cell's size; the cell's title holds it whole. */
function shortened(text: string): string {
  return text.length > MESSAGE_SHOWN ? text.slice(0, MESSAGE_SHOWN - 1) + "…" : text;
}

/** Failures grouped by error and by the location that failed, with counts, most frequent first. */
function failureGroups(failed: Detail[]): HTMLElement {
  const groups = new Map<string, { reason: string; location: string; count: number; example: number }>();
  for (const detail of failed) {
    const error = detail.errors?.[0];
    const reason = error ? `${error.name}/${error.reason}` : "unknown";
    const causes: { location?: string; kind?: string }[] = error?.info?.causes ?? [];
    const keys: string[] | undefined = error?.info?.keys;
    const locations = causes.length ? causes.map((c) => `${c.location || "/"} (${c.kind ?? "?"})`) : [keys ? `keys ${keys.join(", ")}` : "-"];
    for (const location of new Set(locations)) {
      const key = `${reason}\u0000${location}`;
      const label = !causes.length && keys ? keysLabel(keys) : location;
      const group = groups.get(key) ?? { reason, location: label, count: 0, example: detail.index };
      group.count++;
      groups.set(key, group);
    }
  }
  const rows = [...groups.values()].sort((a, b) => b.count - a.count);
  return h(
    "div",
    { class: "scroll" },
    h(
      "table",
      { id: "failure-groups" },
      h("caption", {}, `${formatNumber(failed.length)} failed records, by reason and location`),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Reason"), h("th", { scope: "col" }, "Location"), h("th", { scope: "col", class: "num" }, "Records"), h("th", { scope: "col", class: "num" }, "First at index"))),
      h("tbody", {}, ...rows.map((g) => h("tr", {}, h("td", {}, g.reason), h("td", {}, h("code", {}, g.location)), h("td", { class: "num" }, formatNumber(g.count)), h("td", { class: "num" }, g.example)))),
    ),
  );
}

function detailsBrowser(details: Detail[]): HTMLElement {
  const outcome = h("select", { id: "detail-outcome" }, h("option", { value: "" }, "all outcomes"), ...OUTCOMES.map((o) => h("option", { value: o }, o)));
  const search = h("input", { type: "search", id: "detail-search", placeholder: "login id, user id, message…", autocomplete: "off" });
  const count = h("p", { class: "muted", "aria-live": "polite" });
  const body = h("tbody");
  const more = h("button", { type: "button", class: "secondary" }, "Show more");
  const texts = details.map((d) => JSON.stringify(d).toLowerCase());
  let shown = 0;
  let matches: number[] = [];
  const PAGE = 50;
  const render = (reset: boolean) => {
    if (reset) {
      const needle = search.value.trim().toLowerCase();
      matches = [];
      details.forEach((d, i) => {
        if ((!outcome.value || d.outcome === outcome.value) && (!needle || texts[i].includes(needle))) matches.push(i);
      });
      body.replaceChildren();
      shown = 0;
    }
    for (const i of matches.slice(shown, shown + PAGE)) body.append(detailRow(details[i]));
    shown = Math.min(matches.length, shown + PAGE);
    count.textContent = `${formatNumber(matches.length)} matching details, ${formatNumber(shown)} shown`;
    more.hidden = shown >= matches.length;
  };
  let timer = 0;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = window.setTimeout(() => render(true), 200);
  });
  outcome.addEventListener("change", () => render(true));
  more.addEventListener("click", () => render(false));
  render(true);
  return h(
    "section",
    { class: "card", "aria-labelledby": "details-title" },
    h("h2", { id: "details-title" }, "Details"),
    h("div", { class: "row" }, h("label", { for: "detail-outcome" }, "Outcome "), outcome, h("label", { for: "detail-search" }, "Search "), search),
    count,
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { id: "details" },
        h("caption", { class: "visually-hidden" }, "Details of the task's records"),
        h("thead", {}, h("tr", {}, ...["Index", "Outcome", "Record", "User", "Errors and warnings"].map((c) => h("th", { scope: "col" }, c)))),
        body,
      ),
    ),
    more,
  );
}

function detailRow(detail: Detail): HTMLTableRowElement {
  const notes = [
    ...(detail.errors ?? []).map((e) => {
      const causes: { location?: string; kind?: string }[] = e.info?.causes ?? [];
      const where = causes.map((c) => `${c.location || "/"} ${c.kind ?? ""}`.trim()).join(", ");
      return `${e.reason}: ${e.message}${where ? ` (${where})` : ""}`;
    }),
    ...(detail.warnings ?? []).map((w) => `warning: ${w.message}`),
  ];
  const note = notes.join("; ");
  const record = JSON.stringify(detail.record);
  return h(
    "tr",
    { class: `outcome-${detail.outcome}` },
    h("td", { class: "num" }, detail.index),
    h("td", {}, detail.outcome),
    h("td", {}, h("code", { class: "clip", title: record }, record.length > 120 ? record.slice(0, 117) + "…" : record)),
    h("td", {}, detail.user_id ? h("code", {}, detail.user_id) : "-"),
    h("td", { title: note.length > MESSAGE_SHOWN ? note : null }, shortened(note) || "-"),
  );
}
