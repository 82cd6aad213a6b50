import type { EventOIDCJWTPreCreate, User } from "../../../plugins/hooks.d.ts";

function pick<T extends object, K extends keyof T>(obj: T, keys: K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const key of keys) out[key] = obj[key];
  return out;
}

class Counter<T> {
  private counts = new Map<T, number>();
  add(item: T): this {
    this.counts.set(item, (this.counts.get(item) ?? 0) + 1);
    return this;
  }
  entries(): Array<[T, number]> {
    return Array.from<[T, number]>(this.counts.entries());
  }
}

export default async function (e: EventOIDCJWTPreCreate) {
  const user = pick<User, "id" | "is_disabled">(e.payload.user, ["id", "is_disabled"]);
  const counter = new Counter<string>().add("a").add("b").add("a");
  const total = await Promise.resolve<number>(counter.entries().length);
  const wrapped = Array.of<number>(1, 2, 3).map<string>((n) => `#${n}`);
  return {
    is_allowed: true,
    mutations: {
      jwt: { payload: { ...e.payload.jwt.payload, user, counts: counter.entries(), total, wrapped } },
    },
  };
}
