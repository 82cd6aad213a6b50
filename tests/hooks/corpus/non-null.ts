import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

export default async function (e: EventOIDCJWTPreCreate) {
  const roles = e.payload.user.roles!;
  const byName = new Map<string, number>(roles.map((role, i) => [role, i]));
  const adminIndex = byName.get("admin")!;
  const country = e.payload.user.standard_attributes.address!.country!;
  const firstGroup = e.payload.user.groups![0]!.toUpperCase();
  let late!: string;
  late = "assigned";
  return {
    is_allowed: true,
    mutations: { jwt: { payload: { ...e.payload.jwt.payload, adminIndex, country, firstGroup, late } } },
  };
}
