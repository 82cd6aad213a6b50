// oidc.jwt.pre_create or oidc.id_token.pre_create: refuse the token when the user is disabled, or has an email
// address that is not verified. Otherwise allow it unchanged (no mutations).
import type {
  EventOIDCPreCreate,
  EventOIDCIDTokenPreCreateHookResponse,
  EventOIDCJWTPreCreateHookResponse,
} from "./hooks.d.ts";

type HookResponse = EventOIDCJWTPreCreateHookResponse & EventOIDCIDTokenPreCreateHookResponse;

export default async function (e: EventOIDCPreCreate): Promise<HookResponse> {
  const { user } = e.payload;
  if (user.is_disabled) {
    return { is_allowed: false, title: "Account disabled", reason: "This account is disabled." };
  }
  const { email, email_verified } = user.standard_attributes;
  if (email && email_verified !== true) {
    return { is_allowed: false, title: "Email not verified", reason: `Verify ${email} before signing in.` };
  }
  return { is_allowed: true };
}
