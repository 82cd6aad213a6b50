import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

type Kind = "login_id" | "oauth" | "passkey";

function weight(kind: Kind | string): number {
  switch (kind as Kind) {
    case "login_id":
      return 1;
    case "oauth": {
      const bonus: number = 2;
      return bonus;
    }
    default:
      return 0;
  }
}

export default async function (e: EventOIDCJWTPreCreate) {
  let found: string | null = null;
  outer: for (const identity of e.payload.identities) {
    for (const key in identity.claims as object) {
      if (key === "email") {
        found = identity.claims[key] as string;
        break outer;
      }
    }
  }
  let i: number = 0;
  do {
    i++;
  } while (i < 3);
  return {
    is_allowed: true,
    mutations: {
      jwt: { payload: { ...e.payload.jwt.payload, found, i, w: e.payload.identities.map((x) => weight(x.type)) } },
    },
  };
}
