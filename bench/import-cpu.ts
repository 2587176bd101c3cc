/**
 * The CPU time of a cold `import "toolwire"` in a fresh process (the package resolves itself
 * through its own `exports`), printed as one JSON line. Nothing is imported before the clock starts.
 */
const before = process.cpuUsage();
await import("toolwire");
const spent = process.cpuUsage(before);
process.stdout.write(`${JSON.stringify({ cpuMs: (spent.user + spent.system) / 1000 })}\n`);
