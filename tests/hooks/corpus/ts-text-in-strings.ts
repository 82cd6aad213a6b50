import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

// let x: number = y as any; interface Foo {} enum Bar {} namespace Baz {}
/* <T,>(x: T): T => x!; import { a } from "b"; export default 1; */

const cast = "x as number";
const generic = 'new Map<string, number>()';
const decl = `interface Foo { a?: string } ${"type T = 1"} enum E {}`;
const nested = `outer ${`inner ${cast as string} as T`} satisfies U`;
const html = "<!-- not a comment -->";
const keyword = "declare const x: number; import type { A } from 'a';";

export default async function (e: EventOIDCJWTPreCreate) {
  const strings: string[] = [cast, generic, decl, nested, html, keyword];
  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, strings } } } };
}
