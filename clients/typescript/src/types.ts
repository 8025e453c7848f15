/**
 * Type-level adjustments of the generated `paths` for what the thin layer does at run time:
 * the Idempotency-Key header becomes optional (the client makes one), and with
 * `exactDecimals` money fields are strings in responses and `string | number` in requests.
 */
import type { MoneyField } from './decimals.js'
import type { components, paths } from './schema.js'

type Flatten<T> = { [K in keyof T]: T[K] }

/** `number` → R under money keys, at any depth; other fields unchanged. */
export type WithExactMoney<T, R> = T extends readonly (infer U)[]
  ? WithExactMoney<U, R>[]
  : T extends object
    ? { [K in keyof T]: K extends MoneyField ? (T[K] extends infer V ? (V extends number ? R : V) : never) : WithExactMoney<T[K], R> }
    : T

/** Parameters with `Idempotency-Key` optional (and the header group optional when that was its only member). */
type OptionalIdempotencyKey<Pm> = Pm extends { header: infer H }
  ? 'Idempotency-Key' extends keyof H
    ? Flatten<Omit<Pm, 'header'> & { header?: Flatten<Omit<H, 'Idempotency-Key'> & { 'Idempotency-Key'?: string }> }>
    : Pm
  : Pm

type Operation<O, Exact extends boolean> = {
  [K in keyof O]: K extends 'parameters'
    ? OptionalIdempotencyKey<O[K]>
    : Exact extends true
      ? K extends 'requestBody'
        ? WithExactMoney<O[K], string | number>
        : K extends 'responses'
          ? WithExactMoney<O[K], string>
          : O[K]
      : O[K]
}

/** The generated `paths` as this client serves them (`Exact`: whether `exactDecimals` is on). */
export type ClientPaths<Exact extends boolean = false> = {
  [P in keyof paths]: { [M in keyof paths[P]]: M extends 'parameters' ? paths[P][M] : Operation<paths[P][M], Exact> }
}

/** A named schema of the API (`Model<'Transaction'>`), with money as strings when `Exact`. */
export type Model<Name extends keyof components['schemas'], Exact extends boolean = false> = Exact extends true
  ? WithExactMoney<components['schemas'][Name], string>
  : components['schemas'][Name]

type GetOperation<P, Path extends keyof P> = P[Path] extends { get: infer O } ? O : never
type OkBody<O> = O extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never

/** The list routes (`{data, nextCursor, hasMore}` pages), which `paginate` walks. */
export type ListPath<P> = {
  [K in keyof P]: K extends '/v1/changes'
    ? never
    : P[K] extends { get: { responses: { 200: { content: { 'application/json': { data: unknown[]; nextCursor: string | null; hasMore: boolean } } } } } }
      ? K
      : never
}[keyof P]

/** One item of a list route. */
export type ListItem<P, Path extends keyof P> = OkBody<GetOperation<P, Path>> extends { data: (infer I)[] } ? I : never

/** The query of a list route; `cursor` is the paginator's. */
export type ListQuery<P, Path extends keyof P> = GetOperation<P, Path> extends { parameters: { query?: infer Q } } ? Omit<NonNullable<Q>, 'cursor'> : never

/** A page of the change feed. */
export type ChangesPage<Exact extends boolean = false> = Model<'ChangesResponse', Exact>
/** One change of the feed. */
export type Change<Exact extends boolean = false> = Model<'Change', Exact>
/** What `GET /v1/changes?resources=` takes. */
export type ChangeResource = 'accounts' | 'categories' | 'payees' | 'transactions' | 'tags' | 'budgets'
