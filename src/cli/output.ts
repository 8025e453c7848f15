/** Admin command output: exactly one JSON object with --json, readable lines otherwise. */
export interface Output {
  result(json: Record<string, unknown>, human: string): void
}

export function createOutput(json: boolean, write: (text: string) => void = (text) => process.stdout.write(text)): Output {
  return {
    result(value, human) {
      write(json ? `${JSON.stringify(value)}\n` : `${human}\n`)
    },
  }
}

/** A time in a listing: ISO 8601 UTC, `-` for none. */
export const listedTime = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString())

/** A key's or grant's state in a listing (padded to one width): revoked, else expired once `expiresAt` has passed, else active. */
export const lifeState = (item: { revokedAt: number | null; expiresAt: number | null }, now: number): string =>
  item.revokedAt !== null ? 'revoked' : item.expiresAt !== null && item.expiresAt <= now ? 'expired' : 'active '
