// user.pre_create and user.profile.pre_update: refuse a user whose email is at one of the blocked domains.
import type {
  EventUserPreCreate,
  EventUserPreCreateHookResponse,
  EventUserProfilePreUpdate,
} from "./hooks.d.ts";

const BLOCKED = ["mailinator.com", "example.invalid"];

export default async function (e: EventUserPreCreate | EventUserProfilePreUpdate): Promise<EventUserPreCreateHookResponse> {
  const email = e.payload.user.standard_attributes.email;
  const domain = typeof email === "string" ? email.slice(email.lastIndexOf("@") + 1).toLowerCase() : "";
  if (BLOCKED.includes(domain)) {
    return { is_allowed: false, title: "Email domain not allowed", reason: `Sign-ups from ${domain} are not accepted.` };
  }
  return { is_allowed: true };
}
