import { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "https://deno.land/x/authgear_deno_hook@v1.0.0/mod.ts";

export default async function(e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> {
  const roles = e.payload.user.roles ?? [];
  const payload = e.payload.jwt.payload;
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: {
          ...payload,
          "https://hasura.io/jwt/claims": {
            "x-hasura-allowed-roles": roles,
            "x-hasura-default-role": roles[0] ?? "user",
            "x-hasura-user-id": e.payload.user.id,
          },
        },
      },
    },
  };
}
