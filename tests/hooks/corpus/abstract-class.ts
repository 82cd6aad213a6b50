import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

abstract class Rule {
  abstract readonly name: string;
  abstract check(e: EventOIDCJWTPreCreate): boolean;
  protected abstract get weight(): number;
  score(e: EventOIDCJWTPreCreate): number {
    return this.check(e) ? this.weight : 0;
  }
}

class EmailVerified extends Rule {
  readonly name = "email_verified";
  check(e: EventOIDCJWTPreCreate): boolean {
    return e.payload.user.standard_attributes.email_verified === true;
  }
  protected get weight(): number {
    return 10;
  }
}

class HasRoles extends Rule {
  readonly name = "has_roles";
  check(e: EventOIDCJWTPreCreate) {
    return (e.payload.user.roles ?? []).length > 0;
  }
  protected get weight() {
    return 5;
  }
}

export default async function (e: EventOIDCJWTPreCreate) {
  const rules: Rule[] = [new EmailVerified(), new HasRoles()];
  const trust = rules.reduce((sum: number, rule: Rule) => sum + rule.score(e), 0);
  return {
    is_allowed: true,
    mutations: { jwt: { payload: { ...e.payload.jwt.payload, trust, rules: rules.map((r) => r.name) } } },
  };
}
