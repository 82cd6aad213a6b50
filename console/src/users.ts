// One user at a time (DECISIONS 11): find, see, disable or enable, set a password, delete with a confirmation.
import { call, get, post, put } from "./api";
import { announce, errorBox, h } from "./dom";

interface User {
  sub: string;
  email?: string;
  phone_number?: string;
  preferred_username?: string;
  disabled: boolean;
  [key: string]: unknown;
}

function loginId(user: User): string {
  return user.email ?? user.phone_number ?? user.preferred_username ?? user.sub;
}

export async function usersPage(main: HTMLElement, signal: AbortSignal): Promise<void> {
  main.append(h("h1", {}, "Users"));
  const query = h("input", { id: "user-query", type: "search", autocomplete: "off", placeholder: "ada@example.com" });
  const results = h("ul", { id: "user-results", class: "plain" });
  const detail = h("section", { id: "user-detail", class: "card", "aria-live": "polite" });
  detail.hidden = true;
  const migration = h("section", { id: "password-migration", class: "card" }, h("h2", {}, "Password migration"));
  const search = async (event?: Event) => {
    event?.preventDefault();
    results.replaceChildren();
    try {
      const q = encodeURIComponent(query.value.trim());
      const page = await get<{ result: { items: User[] } }>(`/users?q=${q}&limit=20`);
      if (signal.aborted) return;
      if (!page.result.items.length) results.append(h("li", {}, "No user's login id starts with this."));
      for (const user of page.result.items) {
        results.append(
          h("li", {}, h("button", { type: "button", class: "link", onclick: () => show(detail, user.sub, search) }, loginId(user))),
        );
      }
      announce(`${page.result.items.length} users found`);
    } catch (error) {
      results.append(h("li", {}, errorBox(error)));
    }
  };
  main.append(
    h(
      "form",
      { class: "card", role: "search", onsubmit: search },
      h("label", { for: "user-query" }, "Login id starts with"),
      query,
      h("button", { type: "submit", id: "find-user" }, "Find"),
      results,
    ),
    detail,
    migration,
  );
  await showMigration(migration, signal);
}

interface FormatCount {
  users: number;
  never_signed_in: number;
}

interface MigrationState {
  password_algorithm: string;
  users: number;
  never_signed_in: number;
  without_password: number;
  awaiting_rehash: number;
  awaiting_rehash_never_signed_in: number;
  formats: Record<string, FormatCount>;
}

/** Issue 28: how many users carry each password format, and how many of them never signed in since their import. */
async function showMigration(section: HTMLElement, signal: AbortSignal): Promise<void> {
  let state: MigrationState;
  try {
    state = (await get<{ result: MigrationState }>("/users/password-migration")).result;
  } catch (error) {
    section.append(errorBox(error));
    return;
  }
  if (signal.aborted) return;
  const row = (name: string, count: FormatCount) =>
    h("tr", { "data-format": name }, h("th", { scope: "row" }, name), h("td", {}, count.users), h("td", {}, count.never_signed_in));
  const formats = Object.entries(state.formats).sort(([a], [b]) => a.localeCompare(b));
  section.append(
    h(
      "p",
      { id: "migration-summary" },
      `${state.awaiting_rehash} of ${state.users} users await the re-hash to ${state.password_algorithm}` +
        ` (${state.awaiting_rehash_never_signed_in} of them never signed in since their import);` +
        ` ${state.never_signed_in} never signed in; ${state.without_password} without a password.`,
    ),
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { id: "migration-formats" },
        h("caption", { class: "visually-hidden" }, "Users per password format"),
        h("thead", {}, h("tr", {}, ...["Format", "Users", "Never signed in"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, ...formats.map(([name, count]) => row(name, count))),
      ),
    ),
  );
}

async function show(detail: HTMLElement, sub: string, refresh: () => Promise<void>, message = ""): Promise<void> {
  detail.hidden = false;
  const path = `/users/${encodeURIComponent(sub)}`;
  const status = h("p", { id: "user-status", role: "status" }, message);
  const act = async (label: string, run: () => Promise<unknown>) => {
    try {
      await run();
      if (label !== "Deleted.") await show(detail, sub, refresh, label);
      else {
        detail.replaceChildren(h("p", { id: "user-status", role: "status" }, `User ${sub} deleted.`));
        await refresh();
      }
    } catch (error) {
      status.replaceChildren(errorBox(error));
    }
  };
  let user: User;
  try {
    user = (await get<{ result: User }>(path)).result;
  } catch (error) {
    detail.replaceChildren(errorBox(error));
    return;
  }
  const password = h("input", { id: "new-password", type: "password", autocomplete: "new-password" });
  const confirmation = h("input", { id: "delete-confirmation", autocomplete: "off" });
  detail.replaceChildren(
    h("h2", { id: "user-title" }, loginId(user)),
    h("p", { id: "user-state" }, user.disabled ? "Disabled" : "Enabled"),
    h("pre", { id: "user-record", class: "scroll", tabindex: 0, "aria-label": "The user as exported" }, JSON.stringify(user, null, 2)),
    user.disabled
      ? h("button", { type: "button", id: "enable-user", onclick: () => act("Enabled.", () => post(`${path}/enable`)) }, "Enable")
      : h("button", { type: "button", id: "disable-user", onclick: () => act("Disabled.", () => post(`${path}/disable`, {})) }, "Disable"),
    h(
      "form",
      {
        onsubmit: (event: Event) => {
          event.preventDefault();
          void act("Password set.", () => put(`${path}/password`, { password: password.value }));
        },
      },
      h("label", { for: "new-password" }, "New password"),
      password,
      h("button", { type: "submit", id: "set-password" }, "Set password"),
    ),
    h(
      "form",
      {
        onsubmit: (event: Event) => {
          event.preventDefault();
          if (confirmation.value !== loginId(user)) {
            status.textContent = `Type ${loginId(user)} to confirm the delete.`;
            return;
          }
          void act("Deleted.", () => call("DELETE", path));
        },
      },
      h("label", { for: "delete-confirmation" }, `Type ${loginId(user)} to delete this user and everything of it`),
      confirmation,
      h("button", { type: "submit", id: "delete-user", class: "danger" }, "Delete"),
    ),
    status,
  );
}
