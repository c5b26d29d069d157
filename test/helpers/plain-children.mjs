/**
 * Preloaded into every test process (package.json, tap's `node-arg`), after tap's @tapjs/processinfo. That
 * module puts its loader into the NODE_OPTIONS of every child process a test starts, to track them for
 * coverage, which is off here. Through its hooks a skylark server started by a test loaded its ≈330 modules
 * 1.6× slower: a start took 2.9 s instead of 1.8 s, a stop 0.68 s instead of 0.29 s, a CLI command 1.7 s
 * instead of 0.85 s. Without its spawn listener and its NODE_OPTIONS the servers and CLIs that tests start
 * run as users run them. Plain JavaScript: worker threads inherit the preload, and tsx's hooks do not reach them
 * on Node 20.
 */
const onSpawn = globalThis[Symbol.for('process-on-spawn@*:singletonId')]
if (onSpawn) onSpawn.listeners.length = 0
// tap writes it as `"--import=file:///…/@tapjs/processinfo/…"`, quotes included.
const options = (process.env.NODE_OPTIONS ?? '').replace(/"--import=[^"]*@tapjs\/processinfo[^"]*"|--import=\S*@tapjs\/processinfo\S*/g, '').trim()
if (options) process.env.NODE_OPTIONS = options
else delete process.env.NODE_OPTIONS
