/** `YYYY-MM-DD` of a day number (days since the Unix epoch, UTC): both stores group by this number. */
export function dayOf(day: number): string {
  return new Date(day * 86400000).toISOString().slice(0, 10)
}
