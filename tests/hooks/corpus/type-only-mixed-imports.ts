import { type EventOIDCJWTPreCreate, EventOIDCJWTPreCreateHookResponse } from "https://deno.land/x/authgear_deno_hook@v1.0.0/mod.ts";
import { type Identity } from "https://deno.land/x/authgear_deno_hook@v1.0.0/mod.ts";
import * as All from "https://deno.land/x/authgear_deno_hook@v1.0.0/mod.ts";
import type { User as TheUser } from "../../../plugins/hooks.d.ts";
import { JWTPayload as Payload, type EventContext } from "https://deno.land/x/authgear_deno_hook@v1.0.0/mod.ts";

type Ids = Identity["id"][];

export default async function (e: EventOIDCJWTPreCreate, _context?: EventContext): Promise<EventOIDCJWTPreCreateHookResponse> {
  const user: TheUser = e.payload.user;
  const context: All.EventContext = e.context;
  const ids: Ids = e.payload.identities.map((identity: Identity) => identity.id);
  const payload: Payload = { ...e.payload.jwt.payload, ids, app: context.app_id, uid: user.id };
  return { is_allowed: true, mutations: { jwt: { payload } } };
}
