import type {
  EventOIDCJWTPreCreate,
  EventOIDCJWTPreCreateHookResponse,
} from "../../../plugins/hooks.d.ts";

function merge<
  A extends Record<string, unknown>,
  B extends Record<string, unknown>,
>(
  a: A,
  b: B,
): A &
  B {
  return { ...a, ...b };
}

const limits:
  | { kind: "seats"; value: number }
  | { kind: "none" } = { kind: "seats", value: 3 };

export default async function (
  e: EventOIDCJWTPreCreate,
): Promise<
  EventOIDCJWTPreCreateHookResponse
> {
  const extra = ({
    limit: limits.kind === "seats" ? limits.value : 0,
  }) as {
    limit: number;
  };
  return {
    is_allowed: true,
    mutations: {
      jwt: {
        payload: merge<
          Record<string, unknown>,
          { limit: number }
        >(e.payload.jwt.payload, extra),
      },
    },
  };
}
