import type { EventOIDCJWTPreCreate } from "../../../plugins/hooks.d.ts"

type Pair = [string, number]

const pairs: Pair[] = [["a", 1], ["b", 2]]
let total: number = 0
;[3, 4].forEach((n: number) => (total += n))
const label = `total` as string
;(function (): void {
  total += 100
})()

export default async function (e: EventOIDCJWTPreCreate) {
  const sum: number = pairs.reduce((acc: number, [, n]: Pair) => acc + n, 0)
  return {
    is_allowed: true,
    mutations: { jwt: { payload: { ...e.payload.jwt.payload, sum, [label]: total } } },
  }
}
