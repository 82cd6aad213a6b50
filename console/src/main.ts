import "./style.css";
import { adoptTokenFromFragment, sessionEvents, signOut, token, tokenExpiry } from "./api";
import { h } from "./dom";
import { exportsPage } from "./exports";
import { importsPage, taskPage } from "./imports";
import { scimPage } from "./scim";
import { usersPage } from "./users";
import { webhooksPage } from "./webhooks";

type Page = (main: HTMLElement, signal: AbortSignal) => Promise<void> | void;

adoptTokenFromFragment();

const main = document.getElementById("main") as HTMLElement;
let current: AbortController | null = null;

function signedOutPage(message?: string): void {
  current?.abort();
  document.body.classList.add("signed-out");
  main.replaceChildren(
    h(
      "section",
      { class: "card narrow" },
      h("h1", {}, "Signed out"),
      message ? h("p", { role: "alert" }, message) : null,
      h("p", {}, "Open a fresh sign-in link. On the server, run:"),
      h("pre", {}, h("code", {}, "litestar userio console-url --project <project-id>")),
      h("p", {}, "The link's token stays in this tab only and ends with it."),
    ),
  );
  document.title = "Signed out · userio console";
}

async function hooksPage(target: HTMLElement, signal: AbortSignal): Promise<void> {
  const { hooksPage } = await import("./hooks");
  await hooksPage(target, signal);
}

function route(): void {
  if (!token()) return signedOutPage();
  const expiry = tokenExpiry();
  if (expiry !== null && expiry * 1000 <= Date.now()) {
    signOut();
    return signedOutPage("Your session has ended (the token expired).");
  }
  document.body.classList.remove("signed-out");
  const hash = location.hash.replace(/^#\/?/, "");
  const [section, id] = hash.split("/");
  let page: Page;
  let title: string;
  if (section === "exports") {
    page = exportsPage;
    title = "Exports";
  } else if (section === "users") {
    page = usersPage;
    title = "Users";
  } else if (section === "hooks") {
    page = hooksPage;
    title = "Hooks";
  } else if (section === "webhooks") {
    page = webhooksPage;
    title = "Webhooks";
  } else if (section === "scim") {
    page = scimPage;
    title = "SCIM";
  } else if (section === "imports" && id) {
    page = (m, s) => taskPage(m, s, decodeURIComponent(id));
    title = "Import task";
  } else {
    page = importsPage;
    title = "Imports";
  }
  document.title = `${title} · userio console`;
  for (const link of document.querySelectorAll<HTMLAnchorElement>("[data-nav]")) {
    if (link.dataset.nav === (section || "imports")) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  current?.abort();
  current = new AbortController();
  main.replaceChildren();
  Promise.resolve(page(main, current.signal)).catch((error) => {
    if (!current?.signal.aborted) main.append(h("p", { class: "error", role: "alert" }, String(error?.message ?? error)));
  });
  main.focus({ preventScroll: true });
}

function showSession(): void {
  const expiry = tokenExpiry();
  const label = document.getElementById("session") as HTMLElement;
  if (!token() || expiry === null) {
    label.textContent = "";
    return;
  }
  const minutes = Math.max(0, Math.round((expiry * 1000 - Date.now()) / 60000));
  label.textContent = `Session ends in ${minutes} min`;
  if (expiry * 1000 <= Date.now()) route();
}

document.getElementById("sign-out")?.addEventListener("click", () => {
  signOut();
  location.hash = "";
  signedOutPage("You signed out. The token was removed from this tab.");
  showSession();
});

sessionEvents.addEventListener("forbidden", (event) => {
  const expiry = tokenExpiry();
  if (expiry !== null && expiry * 1000 <= Date.now()) {
    signOut();
    signedOutPage("Your session has ended (the token expired).");
  } else {
    console.warn("admin API refused a call:", (event as CustomEvent).detail);
  }
});

window.addEventListener("hashchange", route);
setInterval(showSession, 30_000);
showSession();
route();
