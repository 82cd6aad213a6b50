import { ApiError, get, post } from "./api";
import { announce, errorBox, formatBytes, formatNumber, formatTime, h, sleep } from "./dom";

/** SPEC 2.6's supported pointers in its order, then the ones the server accepts beyond it (DECISIONS 4). */
const POINTERS = [
  "/sub", "/preferred_username", "/email", "/phone_number", "/email_verified", "/phone_number_verified", "/name",
  "/given_name", "/middle_name", "/nickname", "/profile", "/picture", "/website", "/gender", "/birthdate", "/zoneinfo",
  "/locale", "/address/street_address", "/address/locality", "/address/region", "/address/postal_code",
  "/address/country", "/roles", "/groups", "/disabled", "/identities", "/mfa/emails", "/mfa/phone_numbers",
  "/mfa/totps", "/biometric_count", "/passkey_count", "/family_name", "/address/formatted", "/created_at",
  "/updated_at", "/last_login_at",
];

interface ExportTask {
  id: string;
  created_at: string;
  completed_at?: string;
  status: "pending" | "completed";
  request: { format: string; csv?: { fields?: { pointer: string; field_name?: string }[]; escape_formulas?: boolean } };
  record_count?: number;
  size?: number;
  download_url?: string;
  failed_at?: string;
  error?: { reason: string; message: string };
  progress?: { processed: number };
}

/** SPEC 2.6 rule 2: tokens of the pointer joined with `.` (RFC 6901 unescaped). */
export function derivedName(pointer: string): string {
  return pointer
    .split("/")
    .slice(1)
    .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join(".");
}

interface FieldRow {
  pointer: string;
  checkbox: HTMLInputElement;
  name: HTMLInputElement;
}

export async function exportsPage(main: HTMLElement, signal: AbortSignal): Promise<void> {
  main.append(h("h1", {}, "Exports"));
  let custom: { name: string }[] = [];
  try {
    custom = (await get<{ result: { items: { name: string }[] } }>("/custom-attributes")).result.items;
  } catch {
    custom = [];
  }
  const history = h("tbody");
  main.append(form(custom, history, signal));
  main.append(
    h(
      "section",
      { class: "card", "aria-labelledby": "history-title" },
      h("h2", { id: "history-title" }, "History"),
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          { id: "export-history" },
          h("caption", { class: "visually-hidden" }, "Export tasks, newest first"),
          h("thead", {}, h("tr", {}, ...["Task", "Created", "Format", "Status", "Users", "Size", ""].map((c) => h("th", { scope: "col" }, c)))),
          history,
        ),
      ),
    ),
  );
  await loadHistory(history, signal);
}

async function loadHistory(body: HTMLElement, signal: AbortSignal): Promise<void> {
  let page;
  try {
    page = await get<{ result: { items: ExportTask[] } }>("/users/export?limit=20");
  } catch (error) {
    body.replaceChildren(h("tr", {}, h("td", { colspan: 7 }, errorBox(error))));
    return;
  }
  body.replaceChildren(...page.result.items.map((t) => historyRow(t, signal)));
  if (!page.result.items.length) body.append(h("tr", {}, h("td", { colspan: 7 }, "No export yet.")));
}

function historyRow(task: ExportTask, signal: AbortSignal): HTMLTableRowElement {
  const status = h("td", {});
  const users = h("td", { class: "num" });
  const size = h("td", { class: "num" });
  const action = h("td", {});
  const row = h(
    "tr",
    { "data-id": task.id },
    h("td", {}, h("code", {}, task.id)),
    h("td", {}, formatTime(task.created_at)),
    h("td", {}, task.request.format),
    status,
    users,
    size,
    action,
  );
  const show = (t: ExportTask) => {
    status.textContent = t.failed_at ? `failed: ${t.error?.message ?? ""}` : t.status === "pending" ? `pending (${formatNumber(t.progress?.processed ?? 0)} users written)` : "completed";
    users.textContent = t.record_count !== undefined ? formatNumber(t.record_count) : "";
    size.textContent = t.size !== undefined ? formatBytes(t.size) : "";
    action.replaceChildren();
    if (t.status === "completed" && !t.failed_at) {
      action.append(h("button", { type: "button", class: "secondary", "aria-label": `Download ${t.id}`, onclick: () => void downloadExport(t.id, action) }, "Download"));
    }
  };
  show(task);
  if (task.status === "pending") {
    void (async () => {
      while (!signal.aborted) {
        await sleep(1000);
        try {
          const current = (await get<{ result: ExportTask }>(`/users/export/${task.id}`)).result;
          show(current);
          if (current.status === "completed") {
            announce(`Export ${task.id} completed.`);
            return;
          }
        } catch {
          /* try again */
        }
      }
    })();
  }
  return row;
}

/** Every click asks the status endpoint for a freshly signed URL (valid 60 s) and follows it. */
async function downloadExport(id: string, cell: HTMLElement): Promise<void> {
  try {
    const task = (await get<{ result: ExportTask }>(`/users/export/${id}`)).result;
    if (!task.download_url) throw new Error("the file is not available");
    const link = h("a", { href: task.download_url, rel: "noreferrer noopener" });
    document.body.append(link);
    link.click();
    link.remove();
  } catch (error) {
    cell.append(errorBox(error));
  }
}

function form(custom: { name: string }[], history: HTMLElement, signal: AbortSignal): HTMLElement {
  const csv = h("input", { type: "radio", name: "format", value: "csv", id: "format-csv", checked: true });
  const ndjson = h("input", { type: "radio", name: "format", value: "ndjson", id: "format-ndjson" });
  const rows: FieldRow[] = [];
  const list = h("tbody");
  const addRow = (pointer: string, checked: boolean) => {
    const id = `field-${rows.length}`;
    const checkbox = h("input", { type: "checkbox", id, checked });
    const name = h("input", { type: "text", id: `${id}-name`, placeholder: derivedName(pointer), "aria-label": `Column name for ${pointer}`, autocomplete: "off" });
    rows.push({ pointer, checkbox, name });
    list.append(h("tr", {}, h("td", {}, checkbox), h("td", {}, h("label", { for: id }, h("code", {}, pointer))), h("td", {}, name)));
    checkbox.addEventListener("change", validate);
    name.addEventListener("input", validate);
  };
  for (const pointer of POINTERS) addRow(pointer, ["/sub", "/email", "/name"].includes(pointer));
  for (const attribute of custom) addRow(`/custom_attributes/${attribute.name.replace(/~/g, "~0").replace(/\//g, "~1")}`, false);

  const extra = h("input", { type: "text", id: "custom-attribute", placeholder: "e.g. plan", autocomplete: "off" });
  const addCustom = h("button", { type: "button", class: "secondary", id: "add-custom" }, "Add custom attribute");
  addCustom.addEventListener("click", () => {
    const name = extra.value.trim();
    if (!name) return;
    addRow(`/custom_attributes/${name.replace(/~/g, "~0").replace(/\//g, "~1")}`, true);
    extra.value = "";
    validate();
  });
  const escapeFormulas = h("input", { type: "checkbox", id: "escape-formulas", "aria-describedby": "escape-formulas-help" });
  const problem = h("p", { class: "error", role: "alert", id: "field-error", hidden: true });
  const submit = h("button", { type: "submit", id: "start-export" }, "Start export");
  const outcome = h("div", { "aria-live": "polite" });
  const picker = h(
    "fieldset",
    { id: "fields" },
    h("legend", {}, "Columns (CSV)"),
    h("p", { class: "muted" }, "Tick the columns; leave a name empty to use the derived one."),
    h("div", { class: "scroll fields" }, h("table", {}, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Include"), h("th", { scope: "col" }, "Pointer"), h("th", { scope: "col" }, "Column name"))), list)),
    h("div", { class: "row" }, h("label", { for: "custom-attribute" }, "Custom attribute "), extra, addCustom),
    h(
      "div",
      { class: "row" },
      h("label", {}, escapeFormulas, " Escape spreadsheet formulas"),
      h("span", { class: "muted", id: "escape-formulas-help" }, "a cell starting with =, +, -, @, tab or CR gets a leading '"),
    ),
  );

  function selected() {
    return rows.filter((r) => r.checkbox.checked).map((r) => ({ pointer: r.pointer, field_name: r.name.value.trim() || undefined }));
  }

  /** SPEC 2.6 rule 3 checked here too, so the duplicate is shown before anything is sent. */
  function validate(): boolean {
    for (const row of rows) row.name.removeAttribute("aria-invalid");
    if (!csv.checked) {
      problem.hidden = true;
      submit.disabled = false;
      return true;
    }
    const fields = selected();
    const names = fields.map((f) => f.field_name ?? derivedName(f.pointer));
    const duplicates = [...new Set(names.filter((n, i) => names.indexOf(n) !== i))];
    if (duplicates.length) {
      for (const row of rows) {
        if (row.checkbox.checked && duplicates.includes(row.name.value.trim() || derivedName(row.pointer))) row.name.setAttribute("aria-invalid", "true");
      }
      problem.textContent = `Column names must be unique: ${duplicates.map((d) => `"${d}"`).join(", ")} appears more than once.`;
    } else if (!fields.length) {
      problem.textContent = "Pick at least one column.";
    }
    problem.hidden = !duplicates.length && fields.length > 0;
    submit.disabled = !problem.hidden;
    return problem.hidden;
  }

  const element = h(
    "form",
    { class: "card", "aria-labelledby": "new-export-title", novalidate: true },
    h("h2", { id: "new-export-title" }, "New export"),
    h("fieldset", { class: "row" }, h("legend", {}, "Format"), h("label", {}, csv, " CSV"), h("label", {}, ndjson, " ndjson")),
    picker,
    problem,
    h("div", { class: "row" }, submit),
    outcome,
  );
  const toggle = () => {
    picker.hidden = !csv.checked;
    validate();
  };
  csv.addEventListener("change", toggle);
  ndjson.addEventListener("change", toggle);
  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!validate()) return;
    const options = escapeFormulas.checked ? { fields: selected(), escape_formulas: true } : { fields: selected() };
    const request = csv.checked ? { format: "csv", csv: options } : { format: "ndjson" };
    submit.disabled = true;
    outcome.replaceChildren();
    try {
      const task = (await post<{ result: ExportTask }>("/users/export", request)).result;
      outcome.append(h("p", {}, "Export ", h("code", {}, task.id), " started."));
      history.querySelector("tr td[colspan]")?.parentElement?.remove();
      history.prepend(historyRow(task, signal));
    } catch (error) {
      const reason = error instanceof ApiError ? error.error?.reason : undefined;
      outcome.append(errorBox(reason ? `${reason}: ${(error as Error).message}` : error));
    } finally {
      submit.disabled = false;
    }
  });
  validate();
  return element;
}
