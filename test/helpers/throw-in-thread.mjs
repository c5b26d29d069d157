/**
 * Makes one worker thread of a running Node process throw an uncaught error, as a bug in its code would: through
 * the process's inspector (`--inspect`), it schedules `throw new Error(message)` on the event loop of the thread
 * whose entry URL ends with `suffix`, then waits until the inspector reports the thread gone. Node 20 has WebSocket
 * only behind a flag, so this runs as its own process:
 * `node --experimental-websocket throw-in-thread.mjs <ws url> <suffix> <message>`.
 * The error is thrown from a task of its own, not where the inspector's command arrives: a `process.exit()` run
 * there, in the middle of a better-sqlite3 call or of loading modules, aborted the whole process (Node 20).
 * Exits 1 with a reason if no such thread ended within 10 s.
 */
const [inspectorUrl, suffix, message] = process.argv.slice(2)
const fail = (reason) => {
  console.error(reason)
  process.exit(1)
}
setTimeout(() => fail(`no worker thread ending with ${suffix} ended within 10 s`), 10_000).unref()

const socket = new WebSocket(inspectorUrl)
let target = null
socket.onerror = () => fail(`could not connect to ${inspectorUrl}`)
socket.onopen = () =>
  socket.send(JSON.stringify({ id: 1, method: 'NodeWorker.enable', params: { waitForDebuggerOnStart: false } }))
socket.onmessage = ({ data }) => {
  const { method, params } = JSON.parse(String(data))
  if (method === 'NodeWorker.attachedToWorker' && target === null && params.workerInfo.url.endsWith(suffix)) {
    target = params
    const expression = `setImmediate(() => { throw new Error(${JSON.stringify(message)}) })`
    const evaluate = { id: 1, method: 'Runtime.evaluate', params: { expression } }
    socket.send(JSON.stringify({ id: 2, method: 'NodeWorker.sendMessageToWorker', params: { sessionId: params.sessionId, message: JSON.stringify(evaluate) } }))
  }
  if (method === 'NodeWorker.detachedFromWorker' && params.sessionId === target?.sessionId) process.exit(0)
}
