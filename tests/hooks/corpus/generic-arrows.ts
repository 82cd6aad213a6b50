import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

const identity = <T,>(x: T): T => x;
const pair = <A, B>(a: A, b: B): [A, B] => [a, b];
const first = async <T extends unknown[]>(items: T): Promise<T[0]> => items[0];
const compare = (a: number, b: number) => a < b;

export default async (e: EventOIDCJWTPreCreate) => ({
  is_allowed: true,
  mutations: {
    jwt: {
      payload: {
        ...e.payload.jwt.payload,
        same: identity<string>(e.payload.user.id),
        pair: pair(1, "one"),
        first: await first(["x", "y"]),
        less: compare(1, 2),
      },
    },
  },
});
