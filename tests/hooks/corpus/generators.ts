import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

function* range(start: number, end: number, step: number = 1): Generator<number, void, unknown> {
  for (let i: number = start; i < end; i += step) yield i;
}

async function* letters(word: string): AsyncGenerator<string> {
  for (const char of word) yield char;
}

const squares = function* <T extends number>(values: Iterable<T>): Iterable<number> {
  for (const v of values) yield v * v;
};

export default async function (e: EventOIDCJWTPreCreate) {
  const collected: string[] = [];
  for await (const letter of letters("abc")) collected.push(letter);
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: { ...e.payload.jwt.payload, range: [...range(0, 10, 3)], squares: [...squares([1, 2, 3])], collected },
      },
    },
  };
}
