// Types of the token hooks' events and responses (docs/reference.md#hooks-events), for hook authors.
//
// A hook is a TypeScript module whose default export receives the event and returns (or resolves to) the response:
//
//   import type { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "./hooks.d.ts";
//   export default async function (e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> {
//     return { is_allowed: true };
//   }
//
// Types are erased when the hook is saved, so only `import type` (or imports used only as types) may appear; the
// reference's module URL (https://deno.land/x/authgear_deno_hook@v1.0.0/mod.ts) works the same way.

/** The claims OpenID Connect defines for a user, as the server stores them. Absent when not set. */
export interface UserStandardAttributes {
  preferred_username?: string;
  email?: string;
  phone_number?: string;
  email_verified?: boolean;
  phone_number_verified?: boolean;
  name?: string;
  given_name?: string;
  family_name?: string;
  middle_name?: string;
  nickname?: string;
  profile?: string;
  picture?: string;
  website?: string;
  gender?: string;
  /** `YYYY-MM-DD`, `0000-MM-DD` or `--MM-DD` (year unknown), or `YYYY`. */
  birthdate?: string;
  /** An IANA time zone name, e.g. `Europe/Paris`. */
  zoneinfo?: string;
  /** A BCP 47 language tag, e.g. `fr-CA`. */
  locale?: string;
  address?: {
    formatted?: string;
    street_address?: string;
    locality?: string;
    region?: string;
    postal_code?: string;
    /** ISO 3166-1 alpha-2 code. */
    country?: string;
  };
}

/** A way the user signs in: a login ID, an OAuth provider account, a passkey... */
export interface Identity {
  id: string;
  created_at: string;
  updated_at: string;
  /** `login_id`, `oauth`, `anonymous`, `biometric`, `passkey`, `siwe`, `ldap`. */
  type: string;
  claims: Record<string, unknown>;
}

/** The user the token is issued to. Timestamps are RFC 3339 strings. */
export interface User {
  id: string;
  created_at: string;
  updated_at: string;
  is_disabled: boolean;
  standard_attributes: UserStandardAttributes;
  custom_attributes: Record<string, unknown>;
  /** Role keys, when the project uses roles. */
  roles?: string[];
  /** Group keys, when the project uses groups. */
  groups?: string[];
}

/** Where the event comes from. */
export interface EventContext {
  /** Unix time in seconds. */
  timestamp: number;
  user_id?: string | null;
  /** `user`, `admin_api`, `system`... */
  triggered_by: string;
  language: string;
  ip_address: string;
  user_agent: string;
  app_id: string;
  client_id: string;
}

/** A JWT's claims. The claims the server put there are protected: a hook may add claims, not change or remove them. */
export type JWTPayload = Record<string, unknown>;

interface BaseEvent<Type extends string, Payload> {
  id: string;
  seq: number;
  type: Type;
  payload: Payload;
  context: EventContext;
}

/** `oidc.jwt.pre_create`: a JWT access token is about to be issued. */
export type EventOIDCJWTPreCreate = BaseEvent<
  "oidc.jwt.pre_create",
  { user: User; identities: Identity[]; jwt: { payload: JWTPayload } }
>;

/** `oidc.id_token.pre_create`: an ID token is about to be issued. */
export type EventOIDCIDTokenPreCreate = BaseEvent<
  "oidc.id_token.pre_create",
  { user: User; identities: Identity[]; id_token: { payload: JWTPayload } }
>;

/** Any token hook event. */
export type EventOIDCPreCreate = EventOIDCJWTPreCreate | EventOIDCIDTokenPreCreate;

/** Stop the issuance: the token endpoint answers with an error carrying `title` and `reason`. */
export interface HookDisallow {
  is_allowed: false;
  title?: string;
  reason?: string;
}

/** Answer to `oidc.jwt.pre_create`. A given payload replaces the access token's payload. */
export type EventOIDCJWTPreCreateHookResponse =
  | { is_allowed: true; mutations?: { jwt?: { payload: JWTPayload } } }
  | HookDisallow;

/** Answer to `oidc.id_token.pre_create`. A given payload replaces the ID token's payload. */
export type EventOIDCIDTokenPreCreateHookResponse =
  | { is_allowed: true; mutations?: { id_token?: { payload: JWTPayload } } }
  | HookDisallow;

/**
 * `user.password_migration` (lazy migration): a password sign-in found no user for `login_id` (`user` null), or a
 * user waiting for migration (imported with the password `{"type": "migrate_on_sign_in"}`: `user`). The hook may ask the
 * old system (through `fetch` and `ctx.secrets`) whether `password` is right. Never log or return the password: it
 * is masked like a secret in everything kept of the run.
 */
export type EventUserPasswordMigration = BaseEvent<
  "user.password_migration",
  {
    login_id: string;
    login_id_type: "email" | "phone_number" | "preferred_username";
    password: string;
    user: User | null;
  }
>;

/**
 * Answer to `user.password_migration`. `is_allowed: true` creates the user from `user` (an import record, checked as an
 * import checks it, without `password`: the signed-in password is stored in the project's algorithm), or completes the
 * waiting user with it (its id never changes), and signs in; without `user`, a user with just the login id. `is_allowed: false` or any failure refuses the sign-in.
 */
export type EventUserPasswordMigrationHookResponse =
  | { is_allowed: true; user?: Record<string, unknown> }
  | HookDisallow;

/** `user.pre_create` (blocking): a user is about to be created (single-user API, SCIM, lazy migration; never a bulk
 * import). `user` is the user as it would be; refuse it, or change its attributes, roles and groups. */
export type EventUserPreCreate = BaseEvent<"user.pre_create", { user: User }>;

/** `user.profile.pre_update` (blocking): a user is about to be changed (PATCH, SCIM PUT/PATCH); `user` as it would be. */
export type EventUserProfilePreUpdate = BaseEvent<"user.profile.pre_update", { user: User }>;

/** What a blocking user hook may change: each member given replaces the user's (roles and groups as sets). */
export interface UserMutations {
  standard_attributes?: UserStandardAttributes;
  custom_attributes?: Record<string, unknown>;
  roles?: string[];
  groups?: string[];
}

/**
 * Answer to `user.pre_create` and `user.profile.pre_update`. `is_allowed: false` refuses the change (403
 * `WebHookDisallowed` with `info.reasons: [{reason, title}]`; nothing is written). Mutations go through the same
 * validation as the request: an invalid one fails it.
 */
export type EventUserPreCreateHookResponse = { is_allowed: true; mutations?: { user?: UserMutations } } | HookDisallow;
export type EventUserProfilePreUpdateHookResponse = EventUserPreCreateHookResponse;

/** A committed change (non-blocking: the hook runs after the commit, at least once; its answer is ignored). The same
 * event a webhook receives; `user` is `{id}` alone once deleted. */
export type EventUserChanged = BaseEvent<
  "user.created" | "user.profile.updated" | "user.disabled" | "user.reenabled" | "user.deleted",
  { user: User | { id: string } }
>;

/**
 * The second argument of a hook: `export default async function (e: EventOIDCJWTPreCreate, ctx: HookContext)`.
 * Hooks written for the reference take only `e` and run unchanged.
 */
export interface HookContext {
  /**
   * The project's hook secrets by name (`PUT /_api/admin/hooks/secrets/{name}`), frozen. Their values never appear
   * in the test runner's or the run log's console or errors: they are masked as `[secret]`.
   */
  readonly secrets: Readonly<Record<string, string>>;
}

/** Headers of a hook's fetch: names are case-insensitive; `get` joins repeated values with `, `. */
export interface HookHeaders extends Iterable<[string, string]> {
  append(name: string, value: string): void;
  set(name: string, value: string): void;
  get(name: string): string | null;
  has(name: string): boolean;
  delete(name: string): void;
  forEach(callback: (value: string, name: string, headers: HookHeaders) => void): void;
  entries(): IterableIterator<[string, string]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
}

/** What a hook may pass to `fetch`: a body is a string (`JSON.stringify` it). */
export interface HookRequestInit {
  method?: string;
  headers?: HookHeaders | Record<string, string> | [string, string][];
  body?: string | null;
}

/** A hook's `Request`: `new Request(url, init)`, passed to `fetch` like a URL. */
export interface HookRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: HookHeaders;
  text(): Promise<string>;
  json(): Promise<any>;
}

/** The answer to a hook's fetch. The body is read once (`clone()` first to read it twice). */
export interface HookResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers: HookHeaders;
  /** The final URL, after redirects (all within the allowlist). */
  readonly url: string;
  readonly redirected: boolean;
  readonly bodyUsed: boolean;
  text(): Promise<string>;
  json(): Promise<any>;
  clone(): HookResponse;
}

declare global {
  /**
   * Performed by the server for the hook, to the origins on the project's fetch allowlist only (`https` unless an
   * `http://` origin is listed; private, loopback and link-local addresses only through an IP-literal entry).
   * Redirects are followed within the allowlist; bodies are capped (1 MB by default); calls per run are capped
   * (10 by default); everything ends at the hook's deadline. A refusal rejects with a `TypeError` naming why
   * ("not on the project's fetch allowlist", "resolves to a private address", "too large", "too many fetch calls"),
   * which the hook may catch. `Headers`, `Request` and `Response` exist as globals with the members typed above.
   */
  function fetch(input: string | HookRequest, init?: HookRequestInit): Promise<HookResponse>;
}
