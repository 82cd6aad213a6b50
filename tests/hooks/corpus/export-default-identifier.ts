import type { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "../../../plugins/hooks.d.ts";

async function hook(e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> {
  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, via: hook.name } } } };
}

export default hook;
