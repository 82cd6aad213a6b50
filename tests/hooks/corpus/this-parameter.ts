import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

interface Context {
  prefix: string;
}

function describe(this: Context, name: string): string {
  return `${this.prefix}${name}`;
}

function bare(this: Context) {
  return this.prefix.length;
}

export default async function (this: unknown, e: EventOIDCJWTPreCreate) {
  const ctx: Context = { prefix: "user:" };
  return {
    is_allowed: true,
    mutations: {
      jwt: { payload: { ...e.payload.jwt.payload, who: describe.call(ctx, e.payload.user.id), n: bare.call(ctx) } },
    },
  };
}
