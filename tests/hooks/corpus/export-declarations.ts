import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

export const PREFIX: string = "https://example.com/";
export function claim(name: string): string {
  return PREFIX + name;
}
export class Claims {
  static of(entries: Array<[string, unknown]>): Record<string, unknown> {
    return Object.fromEntries(entries.map(([k, v]) => [claim(k), v]));
  }
}
export type Entry = [string, unknown];
export interface Options {
  verbose?: boolean;
}
export declare const injected: number;
export { claim as makeClaim, PREFIX as prefix };
export type { EventOIDCJWTPreCreate };

export default async function (e: EventOIDCJWTPreCreate) {
  const entries: Entry[] = [["plan", e.payload.user.custom_attributes["plan"]]];
  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, ...Claims.of(entries) } } } };
}
