// oidc.jwt.pre_create: put the user's roles and groups (their keys) into the access token as the `roles` and
// `groups` claims, empty lists when the user has none. Every claim already in the token is kept.
import type { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "./hooks.d.ts";

export default async function (e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> {
  const roles: string[] = e.payload.user.roles ?? [];
  const groups: string[] = e.payload.user.groups ?? [];
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: { ...e.payload.jwt.payload, roles: [...roles], groups: [...groups] },
      },
    },
  };
}
