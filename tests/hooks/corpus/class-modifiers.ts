import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

interface Describable {
  describe(): string;
}

class Base {
  protected readonly kind: string = "base";
  public static created = 0;
  constructor() {
    Base.created++;
  }
  public label(): string {
    return this.kind;
  }
}

class ClaimBuilder extends Base implements Describable {
  private claims: Record<string, unknown> = {};
  protected override readonly kind = "builder";
  public optional?: string;
  declare phantom: number;
  definite!: string;
  static readonly version: number = 2;
  #secret = "hidden";

  public constructor(private_ignored: boolean) {
    super();
    this.definite = private_ignored ? "yes" : "no";
  }

  public set(name: string, value: unknown): this {
    this.claims[name] = value;
    return this;
  }

  public override label(): string {
    return `${super.label()}!`;
  }

  describe(): string {
    return `${this.kind}/${ClaimBuilder.version}/${this.#secret.length}`;
  }

  build(): Record<string, unknown> {
    return { ...this.claims, has_optional: "optional" in this, has_phantom: "phantom" in this };
  }
}

export default async function (e: EventOIDCJWTPreCreate) {
  const builder = new ClaimBuilder(true).set("label", "x");
  const claims = builder.set("described", builder.describe()).set("label", builder.label()).build();
  return {
    is_allowed: true,
    mutations: { jwt: { payload: { ...e.payload.jwt.payload, ...claims, definite: builder.definite, created: Base.created } } },
  };
}
