// oidc.jwt.pre_create: copy the user's standard and custom attributes into the access token.
// Every claim already in the token is kept; the hook adds `standard_attributes` and `custom_attributes`.
import type { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "./hooks.d.ts";

export default async function (e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> {
  const { user } = e.payload;
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: {
          ...e.payload.jwt.payload,
          standard_attributes: user.standard_attributes,
          custom_attributes: user.custom_attributes,
        },
      },
    },
  };
}
