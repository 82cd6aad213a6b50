import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

function box<T>(value: T): { value: T } {
  return { value };
}

const boxString = box<string>;
const makeStrings = Array.of<string>;
const StringMap = Map<string, string>;

export default async function (e: EventOIDCJWTPreCreate) {
  const m = new StringMap([["k", "v"]]);
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: {
          ...e.payload.jwt.payload,
          boxed: boxString(e.payload.user.id),
          strings: makeStrings("a", "b"),
          map: Object.fromEntries(m),
        },
      },
    },
  };
}
