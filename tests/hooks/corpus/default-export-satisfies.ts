import type { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "../../../plugins/hooks.d.ts";

type Hook = (e: EventOIDCJWTPreCreate) => Promise<EventOIDCJWTPreCreateHookResponse>;

export default (async (e: EventOIDCJWTPreCreate) => ({
  is_allowed: true as const,
  mutations: { jwt: { payload: { ...e.payload.jwt.payload, checked: true } } },
})) satisfies Hook;
