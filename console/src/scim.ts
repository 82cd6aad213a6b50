// SCIM (docs/scim.md): the base URL an identity provider needs, the project's bearer tokens, a new one shown once, a revoke.
import { call, get, post } from "./api";
import { announce, errorBox, formatTime, h } from "./dom";

interface ScimToken {
  id: string;
  created_at: string;
  last_used_at: string | null;
}

interface CreatedToken {
  id: string;
  token: string;
  created_at: string;
}

export async function scimPage(main: HTMLElement, signal: AbortSignal): Promise<void> {
  main.append(h("h1", {}, "SCIM provisioning"));
  const section = h("section", { id: "scim-tokens", class: "card" });
  main.append(section);
  await showTokens(section, signal);
}

async function showTokens(section: HTMLElement, signal: AbortSignal, created?: CreatedToken, message = ""): Promise<void> {
  let tokens: ScimToken[];
  let baseUrl: string | null;
  try {
    const result = (await get<{ result: { items: ScimToken[]; base_url: string | null } }>("/scim/tokens")).result;
    tokens = result.items;
    baseUrl = result.base_url;
  } catch (error) {
    section.replaceChildren(h("h2", {}, "Tokens"), errorBox(error));
    return;
  }
  if (signal.aborted) return;
  const status = h("div", { id: "scim-status", role: "status" }, message);
  section.replaceChildren(
    h("h2", {}, "Base URL"),
    baseUrl
      ? h(
          "div",
          {},
          h("p", {}, "The identity provider's SCIM connector base URL (Okta) or Tenant URL (Entra):"),
          h("pre", {}, h("code", { id: "scim-base-url" }, baseUrl)),
        )
      : h("p", { id: "scim-base-url" }, "This server serves no SCIM route (UserIOConfig.scim is None); tokens made here are refused."),
    h("h2", {}, "Tokens"),
  );
  if (created) {
    const copied = h("span", { id: "scim-token-copied", role: "status" });
    section.append(
      h(
        "div",
        { id: "scim-new-token", class: "ok" },
        h("p", {}, `Token ${created.id}, shown this once: give it to the identity provider as its bearer token.`),
        h("pre", {}, h("code", { id: "scim-token-value" }, created.token)),
        h("button", { type: "button", id: "copy-scim-token", class: "secondary", onclick: async () => {
          try {
            await navigator.clipboard.writeText(created.token);
            copied.textContent = "Copied.";
          } catch (error) {
            copied.textContent = `Not copied: ${error instanceof Error ? error.message : String(error)}`;
          }
        } }, "Copy token"),
        " ",
        copied,
      ),
    );
  }
  const revoke = async (t: ScimToken) => {
    if (!confirm(`Revoke SCIM token ${t.id}? The identity provider holding it is refused at once.`)) return;
    try {
      await call("DELETE", `/scim/tokens/${encodeURIComponent(t.id)}`);
      await showTokens(section, signal, undefined, `Token ${t.id} revoked.`);
      announce(`Token ${t.id} revoked.`);
    } catch (error) {
      status.replaceChildren(errorBox(error));
    }
  };
  const rows = tokens.map((t) =>
    h(
      "tr",
      { "data-scim-token": t.id },
      h("td", {}, h("code", {}, t.id)),
      h("td", {}, formatTime(t.created_at)),
      h("td", { class: "scim-last-used" }, t.last_used_at ? formatTime(t.last_used_at) : "never"),
      h("td", {}, h("button", { type: "button", class: "danger", "aria-label": `Revoke ${t.id}`, onclick: () => revoke(t) }, "Revoke")),
    ),
  );
  section.append(
    tokens.length
      ? h(
          "div",
          { class: "scroll" },
          h(
            "table",
            { id: "scim-token-list" },
            h("caption", { class: "visually-hidden" }, "SCIM tokens"),
            h("thead", {}, h("tr", {}, ...["Id", "Created", "Last used", ""].map((c) => h("th", { scope: "col" }, c)))),
            h("tbody", {}, ...rows),
          ),
        )
      : h("p", { id: "no-scim-tokens" }, "No SCIM token yet."),
    h("button", { type: "button", id: "create-scim-token", onclick: async () => {
      try {
        const made = (await post<{ result: CreatedToken }>("/scim/tokens")).result;
        await showTokens(section, signal, made, "Token created.");
        announce("Token created: shown this once.");
      } catch (error) {
        status.replaceChildren(errorBox(error));
      }
    } }, "Create token"),
    status,
  );
}
