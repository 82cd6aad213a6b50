// Webhooks (docs/webhooks.md): the project's endpoints, their recent deliveries with status and attempts, a retry.
import { get, post, put } from "./api";
import { announce, errorBox, formatTime, h } from "./dom";

const EVENTS = ["user.created", "user.profile.updated", "user.disabled", "user.reenabled", "user.deleted"];

interface Webhook {
  id: string;
  url: string;
  events: string[];
  include_import: boolean;
  secret?: string;
}

interface Delivery {
  id: string;
  webhook_id: string;
  change_id: string;
  event_type: string;
  user_id: string;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  updated_at: string;
}

export async function webhooksPage(main: HTMLElement, signal: AbortSignal): Promise<void> {
  main.append(h("h1", {}, "Webhooks"));
  const endpoints = h("section", { id: "webhook-list", class: "card" });
  const deliveries = h("section", { id: "webhook-deliveries", class: "card" });
  main.append(endpoints, deliveries);
  await showEndpoints(endpoints, deliveries, signal);
  await showDeliveries(deliveries, signal);
}

async function showEndpoints(section: HTMLElement, deliveries: HTMLElement, signal: AbortSignal, secret?: Webhook): Promise<void> {
  section.replaceChildren(h("h2", {}, "Endpoints"));
  let webhooks: Webhook[];
  try {
    webhooks = (await get<{ result: { webhooks: Webhook[] } }>("/webhooks")).result.webhooks;
  } catch (error) {
    section.append(errorBox(error));
    return;
  }
  if (signal.aborted) return;
  const save = async (list: Webhook[]) => {
    const body = { webhooks: list.map(({ url, events, include_import }) => ({ url, events, include_import })) };
    const saved = (await put<{ result: { webhooks: Webhook[] } }>("/webhooks", body)).result.webhooks;
    return saved.find((w) => w.secret !== undefined);
  };
  if (secret?.secret) {
    section.append(
      h(
        "div",
        { id: "webhook-secret", class: "ok", role: "status" },
        h("p", {}, `Secret of ${secret.url}, shown this once: sign checks use it (docs/webhooks.md).`),
        h("pre", {}, h("code", {}, secret.secret)),
      ),
    );
  }
  const rows = webhooks.map((w) =>
    h(
      "tr",
      { "data-webhook": w.id },
      h("td", {}, w.url),
      h("td", {}, w.events.join(", ")),
      h("td", {}, w.include_import ? "yes" : "no"),
      h(
        "td",
        {},
        h("button", { type: "button", class: "secondary", onclick: async () => {
          try {
            const rotated = (await post<{ result: { webhooks: Webhook[] } }>(`/webhooks/${encodeURIComponent(w.id)}/secret`)).result.webhooks[0];
            await showEndpoints(section, deliveries, signal, rotated);
            announce("Secret rotated.");
          } catch (error) { section.append(errorBox(error)); }
        } }, "Rotate secret"),
        " ",
        h("button", { type: "button", class: "secondary", onclick: async () => {
          try {
            await save(webhooks.filter((other) => other.id !== w.id));
            await showEndpoints(section, deliveries, signal);
            announce("Webhook removed.");
          } catch (error) { section.append(errorBox(error)); }
        } }, "Remove"),
      ),
    ),
  );
  section.append(
    webhooks.length
      ? h(
          "div",
          { class: "scroll" },
          h(
            "table",
            { id: "webhooks" },
            h("caption", { class: "visually-hidden" }, "Webhooks"),
            h("thead", {}, h("tr", {}, ...["URL", "Events", "Imports", ""].map((c) => h("th", { scope: "col" }, c)))),
            h("tbody", {}, ...rows),
          ),
        )
      : h("p", { id: "no-webhooks" }, "No webhook yet."),
  );
  const url = h("input", { id: "webhook-url", type: "url", required: true, placeholder: "https://crm.example.com/userio" });
  const boxes = EVENTS.map((event) => h("input", { type: "checkbox", value: event, checked: true, id: `webhook-event-${event}` }));
  const imports = h("input", { type: "checkbox", id: "webhook-imports" });
  const status = h("div", { id: "webhook-save", role: "status" });
  const add = async (event: Event) => {
    event.preventDefault();
    status.replaceChildren();
    const events = boxes.filter((b) => b.checked).map((b) => b.value);
    try {
      const created = await save([...webhooks, { id: "", url: url.value.trim(), events, include_import: imports.checked }]);
      await showEndpoints(section, deliveries, signal, created);
      announce("Webhook saved.");
    } catch (error) {
      status.append(errorBox(error));
    }
  };
  section.append(
    h(
      "form",
      { id: "add-webhook", onsubmit: add },
      h("h3", {}, "Add a webhook"),
      h("label", { for: "webhook-url" }, "URL"),
      url,
      h(
        "fieldset",
        {},
        h("legend", {}, "Events"),
        ...EVENTS.map((event, i) => h("label", { for: `webhook-event-${event}`, class: "inline" }, boxes[i], ` ${event}`)),
      ),
      h("label", { for: "webhook-imports", class: "inline" }, imports, " Also the bulk import's entries"),
      h("button", { type: "submit", id: "save-webhook" }, "Add"),
      status,
    ),
  );
}

async function showDeliveries(section: HTMLElement, signal: AbortSignal): Promise<void> {
  section.replaceChildren(
    h("h2", {}, "Recent deliveries"),
    h("button", { type: "button", id: "refresh-deliveries", class: "secondary", onclick: () => showDeliveries(section, signal) }, "Refresh"),
  );
  let items: Delivery[];
  try {
    items = (await get<{ result: { items: Delivery[] } }>("/webhooks/deliveries?limit=50")).result.items;
  } catch (error) {
    section.append(errorBox(error));
    return;
  }
  if (signal.aborted) return;
  if (!items.length) {
    section.append(h("p", { id: "no-deliveries" }, "No delivery yet."));
    return;
  }
  const row = (d: Delivery) =>
    h(
      "tr",
      { "data-delivery": d.id, "data-status": d.status },
      h("td", {}, d.event_type),
      h("td", {}, d.user_id),
      h("td", { class: "delivery-status" }, d.status),
      h("td", { class: "delivery-attempts" }, String(d.attempts)),
      h("td", {}, d.last_status_code === null ? (d.last_error ?? "") : `${d.last_status_code}${d.last_error ? ": " + d.last_error : ""}`),
      h("td", {}, d.next_attempt_at ? formatTime(d.next_attempt_at) : ""),
      h(
        "td",
        {},
        d.status === "failed"
          ? h("button", { type: "button", class: "retry", onclick: async () => {
              try {
                await post(`/webhooks/deliveries/${encodeURIComponent(d.id)}/retry`);
                announce("Delivery sent again.");
                await showDeliveries(section, signal);
              } catch (error) { section.append(errorBox(error)); }
            } }, "Retry")
          : "",
      ),
    );
  section.append(
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { id: "deliveries" },
        h("caption", { class: "visually-hidden" }, "Recent deliveries"),
        h("thead", {}, h("tr", {}, ...["Event", "User", "Status", "Attempts", "Last answer", "Next attempt", ""].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, ...items.map(row)),
      ),
    ),
  );
}
