import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

interface Store<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
  readonly size: number;
}

class MemoryStore<K, V = string> implements Store<K, V>, Iterable<[K, V]> {
  private readonly items: Map<K, V> = new Map<K, V>();
  get(key: K): V | undefined {
    return this.items.get(key);
  }
  set(key: K, value: V): void {
    this.items.set(key, value);
  }
  get size(): number {
    return this.items.size;
  }
  [Symbol.iterator](): Iterator<[K, V]> {
    return this.items[Symbol.iterator]();
  }
}

class Tagged<T> extends Array<T> {}

export default async function (e: EventOIDCJWTPreCreate) {
  const store: Store<string, number> = new MemoryStore<string, number>();
  store.set("seats", e.payload.user.custom_attributes["seats"] as number);
  const tagged = Tagged.from<string>(["x"]);
  return {
    is_allowed: true,
    mutations: { jwt: { payload: { ...e.payload.jwt.payload, seats: store.get("seats"), size: store.size, tagged } } },
  };
}
