import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

interface Claims {
  [name: string]: unknown;
}

interface Tenant<Id extends string = string> {
  readonly id: Id;
  name?: string;
  plans: Array<{ code: string; seats: number }>;
  describe(prefix: string): string;
}

interface PaidTenant extends Tenant<"t-1"> {
  plan: "pro" | "team";
}

function tenantOf(e: EventOIDCJWTPreCreate): PaidTenant {
  return {
    id: "t-1",
    name: e.payload.user.standard_attributes.name,
    plan: "pro",
    plans: [{ code: "pro", seats: 5 }],
    describe(prefix: string): string {
      return `${prefix}:${this.id}:${this.plan}`;
    },
  };
}

export default async function (e: EventOIDCJWTPreCreate) {
  const tenant: PaidTenant = tenantOf(e);
  const claims: Claims = { tenant: tenant.describe("tenant"), seats: tenant.plans[0].seats };
  return { is_allowed: true, mutations: { jwt: { payload: { ...e.payload.jwt.payload, ...claims } } } };
}
