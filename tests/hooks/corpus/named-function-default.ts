import type { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "../../../plugins/hooks.d.ts";

export default async function addHookName(e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> {
  // The name is visible inside the function, as in a named function expression.
  const name: string = addHookName.name;
  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, hook: name } } } };
}
