/**
 * "Today" as schedules see it (CONTRACT §29): the server's UTC calendar date. `PFIN_TODAY`
 * (a test setting, CONTRACT §1) fixes it, so a test can move a server across due dates by
 * restarting it with another date; in-process it is set by the platform from its config.
 */
let fixed: string | null = null

export function fixToday(date: string | null): void {
  fixed = date
}

export function today(): string {
  return fixed ?? new Date().toISOString().slice(0, 10)
}
