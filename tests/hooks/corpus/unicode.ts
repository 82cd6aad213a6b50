import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

// Größe 👋 — erased types below hold non-ASCII text; columns are UTF-16 units.
type Greeting = "héllo 👋" | "こんにちは";
const greeting: Greeting = "héllo 👋";
const wave: "👋" = "👋"; const after = "ok";

export default async function (e: EventOIDCJWTPreCreate) {
  const tag: `${"✓" | "✗"}` = "✓"; const len = greeting.length;
  return {
    is_allowed: true,
    mutations: { jwt: { payload: { ...e.payload.jwt.payload, greeting, wave, after, tag, len } } },
  };
}
