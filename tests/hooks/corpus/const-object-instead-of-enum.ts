import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

const Role = {
  Admin: "admin",
  Editor: "editor",
  Viewer: "viewer",
} as const;
type Role = (typeof Role)[keyof typeof Role];

const RANK: Record<Role, number> = { [Role.Admin]: 3, [Role.Editor]: 2, [Role.Viewer]: 1 };

function highest(roles: readonly string[]): Role {
  const known = roles.filter((r): r is Role => Object.values(Role).includes(r as Role));
  return known.sort((a, b) => RANK[b] - RANK[a])[0] ?? Role.Viewer;
}

export default async function (e: EventOIDCJWTPreCreate) {
  return {
    is_allowed: true,
    mutations: { jwt: { payload: { ...e.payload.jwt.payload, role: highest(e.payload.user.roles ?? []) } } },
  };
}
