/** What a read refused, as the error envelope names it: `{code, detail, attr}`, or null when nothing was thrown. */
export function refusal(read: () => unknown): { code: string; detail: string; attr: string | null } | null {
  try {
    read()
    return null
  } catch (error) {
    // A plain Error (no envelope fields) answers its message as the detail.
    const e = error as { code?: string; detail?: string; attr?: string | null; message: string }
    return { code: e.code as string, detail: e.detail ?? e.message, attr: e.attr as string | null }
  }
}
