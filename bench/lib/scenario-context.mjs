// What a scenario's setup, requests and check get (`ctx`): the server's address, the project's keys, a
// place for state between them, and plain HTTP helpers; and the check each scenario's request passes once
// before it is loaded.

export function contextFor(server) {
  const request = async (method, path, { body, headers } = {}) => {
    const res = await fetch(server.url + path, { method, headers, body })
    const text = await res.text()
    let json = null
    try {
      json = text ? JSON.parse(text) : null
    } catch {
      // not JSON
    }
    return { status: res.status, headers: res.headers, text, json }
  }
  return {
    url: server.url,
    token: server.boot.project_api_key,
    projectId: server.boot.project_id,
    personalKey: server.boot.personal_api_key,
    state: {},
    request,
    api: (method, path, body) =>
      request(method, path, {
        body: body === undefined ? undefined : JSON.stringify(body),
        headers: { authorization: `Bearer ${server.boot.personal_api_key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      }),
  }
}

/** null when the scenario's check requests pass; else why not ('not available' or 'check failed'). */
export async function checkScenario(scenario, ctx, requests) {
  const targets = scenario.checkRequests ? scenario.checkRequests(requests) : [requests[0]]
  for (const req of targets) {
    const res = await ctx.request(req.method, req.path, { body: req.body, headers: req.headers })
    const verdict = scenario.check(res, req)
    if (verdict && typeof verdict === 'object' && verdict.unavailable) return { status: 'not available', reason: verdict.unavailable }
    if (verdict) return { status: 'check failed', reason: String(verdict) }
  }
  return null
}
