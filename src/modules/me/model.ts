import { t } from 'elysia'
import type { AuthContext } from '../../platform/auth.ts'
import { SCOPES } from '../../platform/scopes.ts'

export const Me = t.Object(
  {
    id: t.String({ examples: ['own_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'] }),
    name: t.Union([t.String(), t.Null()]),
    email: t.Union([t.String(), t.Null()]),
    country: t.Union([t.String({ description: 'ISO 3166-1 alpha-2' }), t.Null()]),
    defaultCurrency: t.Union([t.String(), t.Null()]),
    preferredLanguage: t.Union([t.String({ description: 'BCP 47 tag' }), t.Null()]),
    tier: t.Union([t.Literal('pro'), t.Literal('free')]),
    accessMode: t.Union([t.Literal('self'), t.Literal('delegated')], {
      description: '`self`: your own ledger; `delegated`: another owner’s, under a grant (`Pfin-Subject`, CONTRACT §30)',
    }),
    scopes: t.Array(t.String({ enum: [...SCOPES] }), { description: 'the effective scopes: the key’s, and under delegation only those the grant holds too' }),
    principal: t.Union([t.Object({ id: t.String(), name: t.Union([t.String(), t.Null()]) }, { additionalProperties: false }), t.Null()], {
      description: 'under delegation, the owner whose key made the request; null in self mode',
    }),
  },
  { title: 'Me', additionalProperties: false },
)

export const MeResponse = t.Object({ data: Me }, { title: 'MeResponse', additionalProperties: false })

export function toMe(auth: AuthContext): typeof Me.static {
  const owner = auth.subject
  return {
    id: owner.id,
    name: owner.name,
    email: owner.email,
    country: owner.country,
    defaultCurrency: owner.defaultCurrency,
    preferredLanguage: owner.preferredLanguage,
    tier: owner.tier,
    accessMode: auth.accessMode,
    scopes: [...auth.principal.scopes],
    principal: auth.accessMode === 'delegated' ? { id: auth.principal.owner.id, name: auth.principal.owner.name } : null,
  }
}
