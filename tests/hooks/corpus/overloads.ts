import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

function normalise(value: string): string;
function normalise(value: number): number;
function normalise(value: string[]): string[];
function normalise(value: string | number | string[]): string | number | string[] {
  if (typeof value === "string") return value.trim().toLowerCase();
  if (typeof value === "number") return Math.round(value);
  return value.map((v) => normalise(v));
}

class Formatter {
  format(value: string): string;
  format(value: number): string;
  format(value: string | number): string {
    return typeof value === "number" ? value.toFixed(1) : `"${value}"`;
  }
}

export default async function (e: EventOIDCJWTPreCreate) {
  const f = new Formatter();
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: {
          ...e.payload.jwt.payload,
          n1: normalise("  MiXeD "),
          n2: normalise(2.6),
          n3: normalise([" A", "B "]),
          f1: f.format(3),
          f2: f.format("x"),
        },
      },
    },
  };
}
