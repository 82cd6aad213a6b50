import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

declare const Deno: { env: { get(name: string): string | undefined } };
declare function log(message: string): void;
declare let counter: number;
declare class Remote {
  fetch(url: string): Promise<string>;
}
declare enum Colour {
  Red,
  Green,
}
declare namespace Legacy {
  const version: string;
}
declare global {
  interface Array<T> {
    firstOrNull(): T | null;
  }
}

export default async function (e: EventOIDCJWTPreCreate) {
  const hasDeno = typeof Deno !== "undefined";
  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, hasDeno } } } };
}
