import { EventOIDCIDTokenPreCreate, EventOIDCIDTokenPreCreateHookResponse } from "https://deno.land/x/authgear_deno_hook@v1.0.0/mod.ts";

export default async function(e: EventOIDCIDTokenPreCreate): Promise<EventOIDCIDTokenPreCreateHookResponse> {
  const loginIDs = e.payload.identities
    .filter((identity) => identity.type === "login_id")
    .map((identity) => identity.claims["email"]);
  return {
    is_allowed: true,
    mutations: {
      id_token: {
        payload: {
          ...e.payload.id_token.payload,
          login_ids: loginIDs,
          triggered_by: e.context.triggered_by,
        },
      },
    },
  };
}
