import fc from "fast-check";

/**
 * Property tests run with a fixed seed so that CI is deterministic; exploration is the fuzzer's
 * job (`npm run fuzz`). Set FC_SEED to explore other seeds locally (`FC_SEED=random` for a new
 * one each run); a failure prints the seed and path to replay it.
 */
const configured = process.env.FC_SEED;
if (configured !== "random") fc.configureGlobal({ seed: configured === undefined ? 20261122 : Number(configured) });
