import type { EventOIDCJWTPreCreate, JWTPayload } from "../../../plugins/hooks.d.ts";

async function lookup<T>(table: Record<string, T>, key: string): Promise<T | undefined> {
  return table[key];
}

async function safely<T>(work: () => Promise<T>, fallback: T): Promise<T> {
  try {
    return await work();
  } catch (err: unknown) {
    return fallback;
  } finally {
    // nothing to release
  }
}

export default async function (e: EventOIDCJWTPreCreate): Promise<{ is_allowed: true; mutations: { jwt: { payload: JWTPayload } } }> {
  const [seats, plan] = await Promise.all<[Promise<unknown>, Promise<unknown>]>([
    lookup(e.payload.user.custom_attributes, "seats"),
    lookup(e.payload.user.custom_attributes, "plan"),
  ]);
  const failed = await safely<string>(async () => {
    throw new Error("boom");
  }, "fallback");
  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, seats, plan, failed } } } };
}
