import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

const ANGLE = /<T>(x: T)/;
const AS = /\w+ as \w+/g;
const SPLIT = /^(?<local>[^@]+)@(?<domain>[a-z0-9.-]+)$/i;
const SLASHES = /\/+/;

export default async function (e: EventOIDCJWTPreCreate) {
  const email = e.payload.user.standard_attributes.email!;
  const groups = SPLIT.exec(email)!.groups as { local: string; domain: string };
  const seats = e.payload.user.custom_attributes["seats"] as number / 1;
  const half = (seats as number) / 2 / 1;
  const ratio = seats! / 5;
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: {
          ...e.payload.jwt.payload,
          local: groups.local,
          domain: groups.domain,
          angle: ANGLE.test("<T>(x: T)"),
          as: "a as b, c as d".match(AS),
          path: "a//b///c".split(SLASHES),
          half,
          ratio,
        },
      },
    },
  };
}
