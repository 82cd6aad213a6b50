import type { EventOIDCJWTPreCreate, Identity, User } from "../../../plugins/hooks.d.ts";

function summary({ id, is_disabled }: User, [first, ...others]: Identity[] = []): string {
  return `${id}:${is_disabled}:${first?.type}:${others.length}`;
}

export default async function ({ payload, context: { app_id } }: EventOIDCJWTPreCreate) {
  const { user, identities }: { user: User; identities: Identity[] } = payload;
  const [role = "none", ...moreRoles]: string[] = user.roles ?? [];
  const { given_name: given = "?", family_name }: { given_name?: string; family_name?: string } =
    user.standard_attributes;
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: {
          ...payload.jwt.payload,
          summary: summary(user, identities),
          role,
          more: moreRoles,
          name: `${given} ${family_name}`,
          app_id,
        },
      },
    },
  };
}
