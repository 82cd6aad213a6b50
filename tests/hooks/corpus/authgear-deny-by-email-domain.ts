import { EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "https://deno.land/x/authgear_deno_hook@v1.0.0/mod.ts";

const ALLOWED_DOMAINS: string[] = ["example.org", "example.net"];

export default async function(e: EventOIDCJWTPreCreate): Promise<EventOIDCJWTPreCreateHookResponse> {
  const email = e.payload.user.standard_attributes.email as string | undefined;
  const domain = email?.split("@")[1] ?? "";
  if (!ALLOWED_DOMAINS.includes(domain)) {
    return {
      is_allowed: false,
      title: "Forbidden domain",
      reason: `Users of ${domain} cannot sign in to this application.`,
    };
  }
  return { is_allowed: true };
}
