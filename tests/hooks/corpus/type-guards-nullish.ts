import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

function isString(value: unknown): value is string {
  return typeof value === "string";
}

function assertDefined<T>(value: T | undefined, what: string): asserts value is T {
  if (value === undefined) throw new Error(`${what} is missing`);
}

function assertTrue(condition: unknown): asserts condition {
  if (!condition) throw new Error("assertion failed");
}

export default async function (e: EventOIDCJWTPreCreate) {
  const attrs = e.payload.user.standard_attributes;
  assertDefined(attrs.address, "address");
  assertTrue(attrs.address.country);
  const plan: unknown = e.payload.user.custom_attributes["plan"];
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: {
          ...e.payload.jwt.payload,
          country: attrs.address?.country ?? "unknown",
          region: attrs.address?.region ?? null,
          plan: isString(plan) ? plan : "none",
        },
      },
    },
  };
}
