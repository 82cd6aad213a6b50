import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

export default async function (e: EventOIDCJWTPreCreate) {
  const attrs = e.payload.user.standard_attributes as Record<string, unknown>;
  const strings = Object.entries(attrs).reduce<Record<string, string>>((acc, [key, value]) => {
    if (typeof value === "string") acc[`std_${key}`] = value;
    return acc;
  }, {});
  const keys = Object.keys(strings).sort() as Array<keyof typeof strings>;
  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, ...strings, keys } } } };
}
