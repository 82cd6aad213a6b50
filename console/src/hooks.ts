import { ApiError, call, get, post, put } from "./api";
import { announce, errorBox, formatTime, h } from "./dom";
import * as monaco from "./monaco";
import EditorWorker from "monaco-esm/editor/editor.worker.js?worker";
import TsWorker from "monaco-esm/languages/features/typescript/ts.worker.js?worker";

/** The events the Test panel runs against a user and a client. */
const TOKEN_EVENTS = ["oidc.jwt.pre_create", "oidc.id_token.pre_create"] as const;
const MIGRATION_EVENT = "user.password_migration";
/** Blocking user hooks: they see the user as it would be, and may refuse the change or mutate it. */
const USER_EVENTS = ["user.pre_create", "user.profile.pre_update"] as const;
/** Non-blocking: they run after the change committed, their answer ignored (failures in the run log). */
const CHANGE_EVENTS = ["user.created", "user.profile.updated", "user.disabled", "user.reenabled", "user.deleted"] as const;
const EVENTS = [...TOKEN_EVENTS, MIGRATION_EVENT, ...USER_EVENTS, ...CHANGE_EVENTS] as const;
const REFERENCE_MODULE = "https://deno.land/x/authgear_deno_hook@v1.0.0/mod.ts";

interface Hook {
  event: string;
  source: string;
  [extra: string]: unknown;
}

const TEMPLATE = `import type { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "./hooks.d.ts";

export default async function (e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> {
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: { ...e.payload.jwt.payload },
      },
    },
  };
}
`;

const MIGRATION_TEMPLATE = `import type { EventUserPasswordMigration, EventUserPasswordMigrationHookResponse } from "./hooks.d.ts";

// Runs when a password sign-in finds no user for the login id, or a user imported as waiting for it
// ({"type": "migrate_on_sign_in"}). Ask the old system whether the password is right (its origin on the fetch
// allowlist, its key a project secret), then answer with the user's record; the password is stored re-hashed.
export default async function (e: EventUserPasswordMigration): Promise<EventUserPasswordMigrationHookResponse> {
  // const answer = await fetch("https://auth.old.example.com/auth", {
  //   method: "POST",
  //   body: JSON.stringify({ username: e.payload.login_id, password: e.payload.password }),
  // });
  // if (answer.ok) return { is_allowed: true, user: { [e.payload.login_id_type]: e.payload.login_id } };
  return { is_allowed: false };
}
`;

const USER_TEMPLATE = `import type { EventUserPreCreate, EventUserPreCreateHookResponse } from "./hooks.d.ts";

// Runs before the user is created (or, on user.profile.pre_update, changed): e.payload.user is the user as it would
// be. Refuse (nothing is written) or change attributes, roles and groups (checked as the request is).
export default async function (e: EventUserPreCreate): Promise<EventUserPreCreateHookResponse> {
  const email = e.payload.user.standard_attributes.email ?? "";
  if (email.endsWith("@blocked.example.com")) {
    return { is_allowed: false, title: "Sign-up refused", reason: "This email domain is not accepted." };
  }
  return { is_allowed: true, mutations: { user: { roles: [...(e.payload.user.roles ?? []), "member"] } } };
}
`;

const CHANGE_TEMPLATE = `import type { EventUserChanged } from "./hooks.d.ts";

// Runs after the change committed, at least once (drop a repeat by e.id); the answer is ignored and a failure goes
// to the run log. Tell another system through fetch (its origin on the fetch allowlist).
export default async function (e: EventUserChanged) {
  // await fetch("https://crm.example.com/userio", { method: "POST", body: JSON.stringify(e) });
  return { is_allowed: true };
}
`;

/** The starting source of a new hook of `event`. */
function templateOf(event: string): string {
  if (event === MIGRATION_EVENT) return MIGRATION_TEMPLATE;
  if ((USER_EVENTS as readonly string[]).includes(event)) {
    return event === "user.pre_create" ? USER_TEMPLATE : USER_TEMPLATE.split("EventUserPreCreate").join("EventUserProfilePreUpdate");
  }
  if ((CHANGE_EVENTS as readonly string[]).includes(event)) return CHANGE_TEMPLATE;
  return TEMPLATE;
}

let configured = false;

async function configureMonaco(): Promise<void> {
  if (configured) return;
  configured = true;
  (self as any).MonacoEnvironment = {
    getWorker(_id: string, label: string) {
      return label === "typescript" || label === "javascript" ? new TsWorker() : new EditorWorker();
    },
  };
  const ts = monaco.typescript;
  ts.typescriptDefaults.setCompilerOptions({
    target: ts.ScriptTarget.ES2020,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.NodeJs,
    strict: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    baseUrl: "file:///",
    paths: { [REFERENCE_MODULE]: ["hooks.d.ts"] },
  } as any);
  ts.typescriptDefaults.setDiagnosticsOptions({ noSemanticValidation: false, noSyntaxValidation: false });
  const types = await fetch("./hooks.d.ts", { credentials: "omit", referrerPolicy: "no-referrer" }).then((r) => (r.ok ? r.text() : ""));
  ts.typescriptDefaults.addExtraLib(types, "file:///hooks.d.ts");
}

export async function hooksPage(main: HTMLElement, signal: AbortSignal): Promise<void> {
  main.classList.add("wide");
  signal.addEventListener("abort", () => main.classList.remove("wide"));
  main.append(h("h1", {}, "Hooks"));
  await configureMonaco();
  let hooks: Hook[] = (await get<{ result: { hooks: Hook[] } }>("/hooks")).result.hooks;
  if (!hooks.length) hooks = [{ event: EVENTS[0], source: TEMPLATE }];
  const models = hooks.map((hook, i) => monaco.editor.createModel(hook.source, "typescript", monaco.Uri.parse(`file:///hook-${i}.ts`)));
  signal.addEventListener("abort", () => {
    for (const model of models) model.dispose();
  });
  let selected = 0;

  const tabs = h("div", { class: "tabs", role: "tablist", "aria-label": "Hooks in order" });
  const event = h("select", { id: "hook-event" }, ...EVENTS.map((e) => h("option", { value: e }, e)));
  const editorHost = h("div", { class: "editor", id: "editor" });
  const save = h("button", { type: "button", id: "save-hooks" }, "Save all hooks");
  const add = h("button", { type: "button", class: "secondary", id: "add-hook" }, "Add a hook");
  const saveResult = h("div", { id: "save-result", "aria-live": "polite" });
  const problems = h("ul", { id: "problems", class: "problems", "aria-label": "Problems" });
  const editorCard = h(
    "section",
    { class: "card editor-card", "aria-labelledby": "editor-title" },
    h("h2", { id: "editor-title" }, "Editor"),
    tabs,
    h("div", { class: "row" }, h("label", { for: "hook-event" }, "Event "), event, add, save),
    h("p", { class: "muted", id: "editor-help" }, "TypeScript with completion from hooks.d.ts (Ctrl+Space). Tab moves focus out of the editor after Ctrl+M."),
    editorHost,
    problems,
    saveResult,
  );
  const eventHelp = h(
    "p",
    { class: "muted", id: "event-help", hidden: true },
    "A password migration hook runs at sign-in, not in the Test panel: sign in with a login id the project does not have to try it.",
  );
  editorCard.insertBefore(eventHelp, editorHost);
  const testCard = testPanel(() => currentHooks(), () => hooks[selected]?.event ?? EVENTS[0], signal);
  const versionsCard = h("section", { class: "card", "aria-labelledby": "versions-title", id: "versions", hidden: true });
  main.append(h("div", { class: "hooks-layout" }, editorCard, h("div", {}, testCard, versionsCard)));

  const editor = monaco.editor.create(editorHost, {
    model: models[0],
    automaticLayout: true,
    minimap: { enabled: false },
    fontSize: 13,
    scrollBeyondLastLine: false,
    renderFinalNewline: "on", // "dimmed" draws the last line number below the contrast axe-core asks for
    ariaLabel: "Hook source (TypeScript)",
    tabFocusMode: false,
  });
  signal.addEventListener("abort", () => editor.dispose());

  function currentHooks(): Hook[] {
    return hooks.map((hook, i) => ({ ...hook, source: models[i].getValue() }));
  }

  function renderTabs(): void {
    tabs.replaceChildren(
      ...hooks.map((hook, i) =>
        h(
          "button",
          {
            type: "button",
            role: "tab",
            "aria-selected": i === selected ? "true" : "false",
            id: `hook-tab-${i}`,
            onclick: () => select(i),
          },
          `${i + 1}. ${hook.event}`,
        ),
      ),
    );
  }

  function select(i: number): void {
    selected = i;
    editor.setModel(models[i]);
    event.value = hooks[i].event;
    eventHelp.hidden = hooks[i].event !== MIGRATION_EVENT;
    renderTabs();
    renderProblems();
  }

  function renderProblems(): void {
    const markers = monaco.editor.getModelMarkers({ resource: models[selected].uri }).filter((m) => m.severity >= monaco.MarkerSeverity.Warning);
    problems.replaceChildren(
      ...markers.map((m) =>
        h(
          "li",
          { class: m.owner === "server" ? "server" : "" },
          h("button", { type: "button", class: "link", onclick: () => { editor.setPosition({ lineNumber: m.startLineNumber, column: m.startColumn }); editor.focus(); } }, `Line ${m.startLineNumber}, column ${m.startColumn}`),
          `: ${m.message}`,
        ),
      ),
    );
  }
  monaco.editor.onDidChangeMarkers(() => renderProblems());

  event.addEventListener("change", () => {
    const model = models[selected];
    if (model.getValue() === templateOf(hooks[selected].event)) model.setValue(templateOf(event.value)); // untouched
    hooks[selected].event = event.value;
    eventHelp.hidden = event.value !== MIGRATION_EVENT;
    renderTabs();
  });
  add.addEventListener("click", () => {
    hooks.push({ event: EVENTS[0], source: TEMPLATE });
    models.push(monaco.editor.createModel(TEMPLATE, "typescript", monaco.Uri.parse(`file:///hook-${models.length}.ts`)));
    select(hooks.length - 1);
  });
  for (const model of models) model.onDidChangeContent(() => monaco.editor.setModelMarkers(model, "server", []));

  save.addEventListener("click", async () => {
    saveResult.replaceChildren();
    for (const model of models) monaco.editor.setModelMarkers(model, "server", []);
    try {
      const body = await put<{ result: { hooks: Hook[] }; warnings?: string[] }>("/hooks", { ...(await extraTopLevel()), hooks: currentHooks() });
      hooks = body.result.hooks.length ? body.result.hooks : hooks;
      saveResult.append(h("p", { class: "ok" }, `Saved ${body.result.hooks.length} hook(s).`));
      // Each hook ran once on a sample event: one answering in a wrong shape would fail every token.
      const warnings = body.warnings ?? [];
      if (warnings.length) {
        saveResult.append(h("ul", { class: "warnings", id: "save-warnings" }, ...warnings.map((w) => h("li", {}, `Warning: ${w}`))));
      }
      announce(warnings.length ? `Hooks saved with ${warnings.length} warning(s).` : "Hooks saved.");
      void loadVersions(versionsCard, currentHooks, signal);
    } catch (error) {
      const info = error instanceof ApiError ? error.error?.info : undefined;
      if (info && typeof info.line === "number") {
        const model = models[info.index ?? 0];
        monaco.editor.setModelMarkers(model, "server", [
          {
            severity: monaco.MarkerSeverity.Error,
            message: `Server compiler: ${info.message}`,
            startLineNumber: info.line,
            startColumn: info.column,
            endLineNumber: info.line,
            endColumn: info.column + 1,
          },
        ]);
        if (info.index !== undefined) select(info.index);
      }
      saveResult.append(errorBox(`Not saved: ${(error as Error).message}`));
    }
  });

  /** Top-level members the server returned besides `hooks` (e.g. a fetch allowlist), sent back unchanged. */
  async function extraTopLevel(): Promise<Record<string, unknown>> {
    const current = (await get<{ result: Record<string, unknown> }>("/hooks")).result;
    const { hooks: _ignored, ...rest } = current;
    return rest;
  }

  renderTabs();
  select(0);
  await loadVersions(versionsCard, currentHooks, signal);
}

type UserItem = { sub: string; email?: string; phone_number?: string; preferred_username?: string };

/** A user of the search, by its login ids (the admin API's user body, as the export writes it). */
function userLabel(u: UserItem): string {
  const ids = [u.email, u.phone_number, u.preferred_username].filter((v): v is string => Boolean(v));
  return ids.length ? ids.join(", ") : u.sub;
}

function testPanel(hooks: () => Hook[], currentEvent: () => string, signal: AbortSignal): HTMLElement {
  const search = h("input", { type: "search", id: "test-user", autocomplete: "off", placeholder: "email, phone or username", "aria-describedby": "test-user-help" });
  const matches = h("select", { id: "test-user-match", size: 4, "aria-label": "Matching users" });
  const client = h("select", { id: "test-client" });
  const event = h("select", { id: "test-event" }, ...TOKEN_EVENTS.map((e) => h("option", { value: e }, e)));
  const run = h("button", { type: "button", id: "run-test" }, "Run test");
  const output = h("div", { id: "test-output", "aria-live": "polite" });
  let timer = 0;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = window.setTimeout(async () => {
      const value = search.value.trim();
      if (!value) return matches.replaceChildren();
      try {
        const found = await get<{ result: { items: UserItem[] } }>(`/users?q=${encodeURIComponent(value)}&limit=20`);
        matches.replaceChildren(...found.result.items.map((u) => h("option", { value: u.sub }, userLabel(u))));
        if (found.result.items.length) matches.selectedIndex = 0;
      } catch (error) {
        matches.replaceChildren();
      }
    }, 250);
  });
  void get<{ result: { items: { client_id: string; issue_jwt_access_token: boolean }[] } }>("/applications").then((apps) => {
    client.replaceChildren(...apps.result.items.map((a) => h("option", { value: a.client_id }, `${a.client_id}${a.issue_jwt_access_token ? "" : " (opaque access tokens)"}`)));
  });
  run.addEventListener("click", async () => {
    output.replaceChildren();
    if (!matches.value) return output.append(errorBox("Pick a user first: search by login id."));
    event.value = event.value || currentEvent();
    try {
      const started = performance.now();
      const result = (
        await post<{ result: Preview }>("/hooks/test", { event: event.value, user_id: matches.value, client_id: client.value, hooks: hooks() })
      ).result;
      output.append(previewView(result, performance.now() - started));
      announce(result.error ? "The hooks refused the token." : `Test ran: ${Object.keys(result.added_claims).length} claims added.`);
    } catch (error) {
      output.append(errorBox(error));
    }
  });
  signal.addEventListener("abort", () => clearTimeout(timer));
  return h(
    "section",
    { class: "card", "aria-labelledby": "test-title" },
    h("h2", { id: "test-title" }, "Test"),
    h("p", { class: "muted", id: "test-user-help" }, "Runs the hooks in the editor (saved or not) against a user; nothing is issued."),
    h("div", { class: "stack" }, h("label", { for: "test-user" }, "User (login id)"), search, matches),
    h("div", { class: "stack" }, h("label", { for: "test-client" }, "Client"), client),
    h("div", { class: "stack" }, h("label", { for: "test-event" }, "Event"), event),
    h("div", { class: "row" }, run),
    output,
  );
}

interface Preview {
  payload: Record<string, unknown>;
  added_claims: Record<string, unknown>;
  hooks: { index: number; duration_ms: number; console: { level: string; message: string }[]; error?: any }[];
  error?: { name: string; reason: string; message: string; info?: any };
}

function previewView(result: Preview, roundTripMs: number): HTMLElement {
  const added = new Set(Object.keys(result.added_claims));
  const before = Object.entries(result.payload).filter(([k]) => !added.has(k));
  const rows = [
    ...before.map(([k, v]) => h("tr", {}, h("td", {}, " "), h("td", {}, h("code", {}, k)), h("td", {}, h("code", {}, JSON.stringify(v))))),
    ...[...added].map((k) => h("tr", { class: "added" }, h("td", { "aria-label": "added" }, "+"), h("td", {}, h("code", {}, k)), h("td", {}, h("code", {}, JSON.stringify(result.added_claims[k]))))),
  ];
  const refused = result.error?.reason === "InvalidJWTMutations" || result.error?.info?.removed || result.error?.info?.changed;
  return h(
    "div",
    {},
    result.error
      ? h(
          "div",
          { class: "error", role: "alert", id: "test-error" },
          h("p", {}, h("strong", {}, `${result.error.name}/${result.error.reason}`), `: ${result.error.message}`),
          refused
            ? h(
                "p",
                {},
                "Hooks may add claims but never remove or change one the server set. ",
                result.error.info?.removed?.length ? `Removed: ${result.error.info.removed.join(", ")}. ` : "",
                result.error.info?.changed?.length ? `Changed: ${result.error.info.changed.join(", ")}.` : "",
              )
            : null,
          h("p", {}, "A token would not be issued."),
        )
      : null,
    h("h3", {}, "Payload: before → after"),
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { id: "test-diff", class: "diff" },
        h("caption", { class: "visually-hidden" }, "Claims; added ones are marked +"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, ""), h("th", { scope: "col" }, "Claim"), h("th", { scope: "col" }, "Value"))),
        h("tbody", {}, rows),
      ),
    ),
    h("h3", {}, "Console"),
    h(
      "pre",
      { class: "console", id: "test-console", tabindex: 0 },
      result.hooks.flatMap((run) => run.console.map((line) => `[hook ${run.index + 1}] ${line.level}: ${line.message}\n`)).join("") || "(no output)",
    ),
    h("h3", {}, "Timings"),
    h(
      "ul",
      { id: "test-timings" },
      ...result.hooks.map((run) => h("li", {}, `Hook ${run.index + 1}: ${run.duration_ms.toFixed(1)} ms${run.error ? ` (${run.error.kind ?? run.error.reason ?? "error"})` : ""}`)),
      h("li", {}, `Round trip: ${roundTripMs.toFixed(0)} ms`),
    ),
  );
}

// ---- Versions (when the server keeps them: GET /hooks/versions) --------------------------------------------

interface Version {
  version: number;
  created_at: string;
  actor?: { kid?: string | null; sub?: string | null } | string | null;
}

function actorText(actor: Version["actor"]): string {
  if (!actor) return "";
  if (typeof actor === "string") return actor;
  return [actor.sub, actor.kid && `key ${actor.kid}`].filter(Boolean).join(", ");
}

async function loadVersions(card: HTMLElement, current: () => Hook[], signal: AbortSignal): Promise<void> {
  let versions: Version[];
  try {
    const body = await get<any>("/hooks/versions");
    versions = body?.result?.versions ?? body?.result?.items ?? [];
    if (!Array.isArray(versions)) return;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 404 || error.status === 405)) {
      card.hidden = true;
      return;
    }
    throw error;
  }
  if (signal.aborted) return;
  card.hidden = false;
  const diffHost = h("div", { class: "diff-editor", id: "version-diff", hidden: true });
  card.replaceChildren(
    h("h2", { id: "versions-title" }, "Versions"),
    h("p", { class: "muted" }, "Every save is a version. Diff compares one with the editor; roll back saves it again as a new version."),
    h(
      "ul",
      { class: "versions" },
      ...versions.map((v) =>
        h(
          "li",
          {},
          `#${v.version} · ${formatTime(v.created_at)}${actorText(v.actor) ? ` · ${actorText(v.actor)}` : ""} `,
          h("button", { type: "button", class: "secondary", "aria-label": `Diff version ${v.version}`, onclick: () => void showDiff(v.version) }, "Diff"),
          h("button", { type: "button", class: "secondary", "aria-label": `Roll back to version ${v.version}`, onclick: () => void rollback(v.version) }, "Roll back"),
        ),
      ),
    ),
    diffHost,
  );
  let diff: monaco.editor.IStandaloneDiffEditor | null = null;
  signal.addEventListener("abort", () => diff?.dispose());
  async function showDiff(version: number): Promise<void> {
    const body = await get<any>(`/hooks/versions/${version}`);
    const saved: Hook[] = body?.result?.body?.hooks ?? [];
    diffHost.hidden = false;
    diff ??= monaco.editor.createDiffEditor(diffHost, {
      automaticLayout: true,
      readOnly: true,
      renderSideBySide: false,
      minimap: { enabled: false },
    });
    // The panes' own labels (originalAriaLabel and modifiedAriaLabel do not reach their input elements).
    diff.getOriginalEditor().updateOptions({ ariaLabel: "Hooks of the chosen version" });
    diff.getModifiedEditor().updateOptions({ ariaLabel: "Hooks in the editor" });
    const text = (hooks: Hook[]) => hooks.map((hook, i) => `// hook ${i + 1}: ${hook.event}\n${hook.source}`).join("\n");
    const previous = diff.getModel();
    diff.setModel({
      original: monaco.editor.createModel(text(saved), "plaintext"),
      modified: monaco.editor.createModel(text(current()), "plaintext"),
    });
    previous?.original.dispose();
    previous?.modified.dispose();
    diffHost.setAttribute("aria-label", `Version ${version} (removed lines) against the editor (added lines)`);
  }
  async function rollback(version: number): Promise<void> {
    if (!confirm(`Roll back to version ${version}? It is saved again as a new version.`)) return;
    try {
      await call("POST", `/hooks/versions/${version}/rollback`);
      announce(`Rolled back to version ${version}.`);
      location.reload();
    } catch (error) {
      card.append(errorBox(error));
    }
  }
}
