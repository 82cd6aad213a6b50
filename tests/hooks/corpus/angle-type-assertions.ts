import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

export default async function (e: EventOIDCJWTPreCreate) {
  const attrs = <Record<string, unknown>>e.payload.user.custom_attributes;
  const plan = <string>attrs["plan"];
  const seats = <number>(<unknown>attrs["seats"]) + 1;
  return {
    is_allowed: true,
    mutations: { jwt: { payload: { ...e.payload.jwt.payload, plan: plan.toUpperCase(), seats } } },
  };
}
