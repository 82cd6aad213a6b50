// oidc.id_token.pre_create: put the user's custom attributes into the ID token as the `custom_attributes` claim,
// null when the user has none. Every claim already in the token is kept.
import type { EventOIDCIDTokenPreCreate, EventOIDCIDTokenPreCreateHookResponse } from "./hooks.d.ts";

export default async function (e: EventOIDCIDTokenPreCreate): Promise<EventOIDCIDTokenPreCreateHookResponse> {
  const attributes: Record<string, unknown> = e.payload.user.custom_attributes ?? {};
  return {
    is_allowed: true,
    mutations: {
      id_token: {
        payload: {
          ...e.payload.id_token.payload,
          custom_attributes: Object.keys(attributes).length > 0 ? attributes : null,
        },
      },
    },
  };
}
