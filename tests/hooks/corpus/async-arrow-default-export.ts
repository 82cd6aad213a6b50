import type { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "../../../plugins/hooks.d.ts";

const delay = (value: number): Promise<number> => new Promise<number>((resolve) => resolve(value));

export default async (e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> => {
  const seats: number = await delay(e.payload.user.custom_attributes["seats"] as number);
  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, seats: seats * 2 } } } };
};
