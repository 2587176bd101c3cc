import { execFile } from "node:child_process";
import { promisify } from "node:util";

/** The Python 3 interpreter on PATH (`python3`, else `python`), or null when there is none. */
export async function findPython(): Promise<string | null> {
  const run = promisify(execFile);
  for (const name of ["python3", "python"]) {
    try {
      const { stdout } = await run(name, ["-c", "import sys; print(sys.version_info[0])"]);
      if (stdout.trim() === "3") return name;
    } catch {
      // not this one
    }
  }
  return null;
}
