#!/usr/bin/env -S deno run
import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

export default async function (e: EventOIDCJWTPreCreate) {
  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, hashbang: true } } } };
}
