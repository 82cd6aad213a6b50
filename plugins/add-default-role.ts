// user.pre_create: every new user gets the role "member" (the project must define it, or create unknown roles).
import type { EventUserPreCreate, EventUserPreCreateHookResponse } from "./hooks.d.ts";

const DEFAULT_ROLE = "member";

export default async function (e: EventUserPreCreate): Promise<EventUserPreCreateHookResponse> {
  const roles = e.payload.user.roles ?? [];
  if (roles.includes(DEFAULT_ROLE)) {
    return { is_allowed: true };
  }
  return { is_allowed: true, mutations: { user: { roles: [...roles, DEFAULT_ROLE] } } };
}
