// Lazy migration (docs/hooks.md): ask the old system whether the password is right; if so, create the user.
// Save with: userio hooks push --event user.password_migration plugins/migrate-from-old-system.ts
// Needs the old system's origin on the fetch allowlist and its key as the secret OLD_SYSTEM_KEY.
import type { EventUserPasswordMigration, EventUserPasswordMigrationHookResponse } from "./hooks.d.ts";

const OLD_SYSTEM = "https://auth.old.example.com";

export default async function (
  e: EventUserPasswordMigration,
  ctx: { secrets: Record<string, string> },
): Promise<EventUserPasswordMigrationHookResponse> {
  const response = await fetch(`${OLD_SYSTEM}/auth`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${ctx.secrets.OLD_SYSTEM_KEY}` },
    body: JSON.stringify({ username: e.payload.login_id, password: e.payload.password }),
  });
  if (!response.ok) {
    return { is_allowed: false };
  }
  const old = await response.json();
  return {
    is_allowed: true,
    user: { [e.payload.login_id_type]: e.payload.login_id, name: old.name, custom_attributes: { old_id: old.sub } },
  };
}
