import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

class Account {
  static #instances: number = 0;
  #email: string;
  private static readonly domainSeparator: string = "@";

  constructor(email: string) {
    this.#email = email;
    Account.#instances += 1;
  }

  get email(): string {
    return this.#email;
  }

  set email(value: string) {
    this.#email = value.toLowerCase();
  }

  get domain(): string {
    return this.#email.split(Account.domainSeparator)[1];
  }

  static get count(): number {
    return Account.#instances;
  }

  static {
    Account.#instances = 100;
  }
}

export default async function (e: EventOIDCJWTPreCreate) {
  const account = new Account(e.payload.user.standard_attributes.email as string);
  account.email = "ADA@EXAMPLE.ORG";
  return {
    is_allowed: true,
    mutations: { jwt: { payload: { ...e.payload.jwt.payload, email: account.email, domain: account.domain, count: Account.count } } },
  };
}
