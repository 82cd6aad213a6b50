import { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "https://deno.land/x/authgear_deno_hook@v1.0.0/mod.ts";

export default async function(e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> {
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: {
          ...e.payload.jwt.payload,
          "https://example.com/custom_attributes": e.payload.user.custom_attributes,
          "https://example.com/standard_attributes": e.payload.user.standard_attributes,
        },
      },
    },
  };
}
