import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/**
 * Headless Chromium from the system (Debian's `chromium` package), driven without any browser
 * automation library: it opens one page, and the page reports back to the test over HTTP.
 */

const CANDIDATES = ["chromium", "chromium-browser", "google-chrome-stable", "google-chrome"];

/** How to get the browser suite to run, in one line. */
export const HOW_TO_RUN = "apt-get install chromium, or set TOOLWIRE_CHROMIUM=/path/to/chromium";

/**
 * The Chromium to run: TOOLWIRE_CHROMIUM (or CHROME_PATH) as given, else the first candidate on
 * PATH that really starts. Ubuntu's `chromium-browser` deb is a stub that only asks for snap: an
 * executable that cannot print its version is not a browser.
 */
export function findChromium(): string | null {
  const configured = process.env.TOOLWIRE_CHROMIUM ?? process.env.CHROME_PATH;
  if (configured) return configured;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    for (const name of CANDIDATES) {
      const path = join(dir, name);
      try {
        accessSync(path, constants.X_OK);
      } catch {
        continue; // Not here: keep looking.
      }
      if (startsAsChromium(path)) return path;
    }
  }
  return null;
}

function startsAsChromium(path: string): boolean {
  const result = spawnSync(path, ["--version"], { encoding: "utf8", timeout: 15_000 });
  return result.status === 0 && /chrom/i.test(result.stdout);
}

/**
 * The flags a sandboxed root needs (no setuid sandbox, no GPU, a small /dev/shm), and the ones
 * that keep Chromium from calling out of a closed network (background services, QUIC,
 * component updates) where every refused connection would only slow the start down.
 */
export const CHROMIUM_FLAGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-quic",
  "--no-first-run",
  "--no-default-browser-check",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-extensions",
  "--disable-default-apps",
  "--mute-audio",
  "--disable-breakpad",
  "--disable-crash-reporter",
];

export interface RunningBrowser {
  /** The last lines Chromium printed, for failure messages. */
  output(): string;
  /** Resolves with Chromium's exit code if it ends on its own. */
  exited: Promise<number | null>;
  /** Kills Chromium and every process it started, and removes its profile. Idempotent. */
  close(): Promise<void>;
}

export function launchChromium(executable: string, url: string): RunningBrowser {
  const profile = mkdtempSync(join(tmpdir(), "toolwire-chromium-"));
  // Its own process group, so that the renderer and zygote processes go down with it.
  const child: ChildProcess = spawn(executable, [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`, url], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString("utf8")).slice(-4000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code));
    child.once("error", (error) => {
      output += `\nspawn failed: ${error.message}`;
      resolve(null);
    });
  });
  let closed = false;
  return {
    output: () => output,
    exited,
    async close() {
      if (closed) return;
      closed = true;
      if (child.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // Already gone.
        }
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      }
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
