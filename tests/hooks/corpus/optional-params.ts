import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

function greet(name: string, greeting?: string, ...rest: string[]): string {
  return `${greeting ?? "Hello"}, ${name}${rest.length ? ` (${rest.join(", ")})` : ""}`;
}

const shout = (text?: string, times: number = 1): string => (text ?? "").toUpperCase().repeat(times);

class Options {
  constructor(public_name?: string, size?: number) {
    this.value = `${public_name ?? "none"}:${size ?? 0}`;
  }
  value: string;
  maybe?(): string {
    return "method";
  }
}

export default async function (e: EventOIDCJWTPreCreate, ctx?: unknown, extra?: unknown) {
  const given = e.payload.user.standard_attributes.given_name!;
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: {
          ...e.payload.jwt.payload,
          a: greet(given),
          b: greet(given, "Hi", "x", "y"),
          c: shout("ok", 2) + shout(),
          d: new Options().value,
          e: new Options("n", 3).maybe?.(),
          extra: extra === undefined,
        },
      },
    },
  };
}
