import type { EventOIDCJWTPreCreate /* the event */ } from "../../../plugins/hooks.d.ts"; // types only

function scale(value /* the value */: /* a number */ number, factor: number /* > 0 */ = 2): number /* scaled */ {
  return value * factor; // plain code
}

interface Doc {
  // a comment inside an erased interface
  /** and a doc comment */
  field: string;
}

export default async function (e: EventOIDCJWTPreCreate /* , extra */) /* : Promise<...> */ {
  const doc: Doc /* erased */ = { field: "f" };
  return {
    is_allowed: true,
    mutations: { jwt: { payload: { ...e.payload.jwt.payload, scaled: scale(21), doc } } },
  };
}
