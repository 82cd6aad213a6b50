import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

const KEY = "computedKey" as const;

const helpers = {
  twice<T>(value: T): [T, T] {
    return [value, value];
  },
  async later(value: number): Promise<number> {
    return value + 1;
  },
  get now(): number {
    return 7;
  },
  *pairs<K extends string>(keys: K[]): Generator<[K, number]> {
    let i = 0;
    for (const key of keys) yield [key, i++];
  },
  [KEY]: (x: number): number => x * 3,
};

export default async function (e: EventOIDCJWTPreCreate) {
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: {
          ...e.payload.jwt.payload,
          twice: helpers.twice<string>("a"),
          later: await helpers.later(1),
          now: helpers.now,
          pairs: [...helpers.pairs(["x", "y"])],
          computed: helpers.computedKey(2),
        },
      },
    },
  };
}
