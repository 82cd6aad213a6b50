import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

const type = "t";
const as = 2;
let declare = 3;
const satisfies = 4;
const readonly = 5;
const keyof = 6;
const infer = 7;
const is = 8;
const abstract = 9;
const override = 10;
function namespace(module: number): number {
  return module * 2;
}
const asserts = { type, as, declare };
declare = declare + 1;
const object = { interface: 1, enum: 2, type: 3, private: 4, public: 5, implements: 6 };

export default async function (e: EventOIDCJWTPreCreate) {
  const sum: number = as + satisfies + readonly + keyof + infer + is + abstract + override + namespace(1);
  return {
    is_allowed: true,
    mutations: { jwt: { payload: { ...e.payload.jwt.payload, sum, declare, asserts, object } } },
  };
}
