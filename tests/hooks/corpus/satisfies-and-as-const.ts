import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts";

type Tier = { seats: number; label: string };

const TIERS = {
  free: { seats: 1, label: "Free" },
  pro: { seats: 10, label: "Pro" },
} satisfies Record<string, Tier>;

const LEVELS = ["bronze", "silver", "gold"] as const;
type Level = (typeof LEVELS)[number];

export default async function (e: EventOIDCJWTPreCreate) {
  const plan = e.payload.user.custom_attributes["plan"] as keyof typeof TIERS;
  const level: Level = LEVELS[2];
  const tier = TIERS[plan] satisfies Tier;
  return {
    is_allowed: true,
    mutations: { jwt: { payload: { ...e.payload.jwt.payload, tier: tier.label, seats: tier.seats, level } } },
  } satisfies { is_allowed: boolean; mutations?: unknown };
}
