import type { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "../../../plugins/hooks.d.ts";

const hook = async (e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> => ({
  is_allowed: true,
  mutations: { jwt: { payload: { ...e.payload.jwt.payload, via: "export-as-default" } } },
});

export { hook as default };
