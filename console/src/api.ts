// Every call goes to the admin API with the admin token in the Authorization header, never elsewhere.

const TOKEN_KEY = "userio.console.token";
export const API = "/_api/admin";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }

  /** The export-style error object, when the answer carried one. */
  get error(): { name?: string; reason?: string; message?: string; info?: any } | undefined {
    const error = (this.body as any)?.error;
    return typeof error === "object" && error !== null ? error : undefined;
  }
}

export function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Takes the token from the URL fragment (`#token=...`) into sessionStorage and removes it from the address. */
export function adoptTokenFromFragment(): void {
  const match = /^#token=([A-Za-z0-9_\-.]+)$/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, match[1]);
    history.replaceState(null, "", location.pathname + "#/imports");
  }
}

export function signOut(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** Seconds since the epoch at which the token expires, read from its (unverified) payload. */
export function tokenExpiry(): number | null {
  const value = token();
  if (!value) return null;
  try {
    const part = value.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const payload = JSON.parse(atob(part + "=".repeat((4 - (part.length % 4)) % 4)));
    return typeof payload.exp === "number" ? payload.exp : null;
  } catch {
    return null;
  }
}

export const sessionEvents = new EventTarget();

export async function call<T>(method: string, path: string, body?: unknown, extraHeaders?: Record<string, string>): Promise<T> {
  const headers: Record<string, string> = { ...extraHeaders, Authorization: `Bearer ${token() ?? ""}` };
  let payload: BodyInit | undefined;
  if (typeof body === "string") {
    headers["Content-Type"] = "application/json";
    payload = body;
  } else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  const response = await fetch(API + path, {
    method,
    headers,
    body: payload,
    credentials: "omit",
    cache: "no-store",
    referrerPolicy: "no-referrer",
  });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  if (!response.ok) {
    const error = (parsed as any)?.error;
    const message = typeof error === "string" ? error : (error?.message ?? `HTTP ${response.status}`);
    if (response.status === 403) sessionEvents.dispatchEvent(new CustomEvent("forbidden", { detail: message }));
    throw new ApiError(response.status, message, parsed);
  }
  return parsed as T;
}

export const get = <T>(path: string) => call<T>("GET", path);
export const post = <T>(path: string, body?: unknown) => call<T>("POST", path, body);
export const put = <T>(path: string, body?: unknown) => call<T>("PUT", path, body);
