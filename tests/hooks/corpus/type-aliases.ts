import type { EventOIDCJWTPreCreate, JWTPayload } from "../../../plugins/hooks.d.ts";

type Level = "low" | "medium" | "high";
type Scores = { [K in Level]: number };
type Upper<S extends string> = S extends `${infer First}${infer Rest}` ? `${Uppercase<First>}${Rest}` : S;
type Keys = keyof Scores;
type Mutable<T> = { -readonly [P in keyof T]: T[P] };
type Handler = (e: EventOIDCJWTPreCreate) => Promise<{ is_allowed: true; mutations: { jwt: { payload: JWTPayload } } }>;

const scores: Scores = { low: 1, medium: 5, high: 10 };

function upper<S extends string>(s: S): Upper<S> {
  return (s.charAt(0).toUpperCase() + s.slice(1)) as Upper<S>;
}

const handler: Handler = async (e) => {
  const keys = Object.keys(scores) as Keys[];
  const labels: Mutable<Record<string, number>> = {};
  for (const key of keys) labels[upper(key)] = scores[key];
  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, labels } } } };
};

export default handler;
