import type { EventOIDCIDTokenPreCreate, EventOIDCIDTokenPreCreateHookResponse } from "../../../plugins/hooks.d.ts";

const REQUIRED_ROLE = "owner";

export default async function (e: EventOIDCIDTokenPreCreate): Promise<EventOIDCIDTokenPreCreateHookResponse> {
  const roles: readonly string[] = e.payload.user.roles ?? [];
  if (!roles.includes(REQUIRED_ROLE)) {
    return { is_allowed: false, title: "Not allowed", reason: `Only users with the ${REQUIRED_ROLE} role may sign in.` };
  }
  return { is_allowed: true };
}
