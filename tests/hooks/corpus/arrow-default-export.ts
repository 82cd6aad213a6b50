import type { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "../../../plugins/hooks.d.ts";

export default (e: EventOIDCJWTPreCreate): EventOIDCJWTPreCreateHookResponse => ({
  is_allowed: true,
  mutations: { jwt: { payload: { ...e.payload.jwt.payload, sync: true } } },
});
